package io.switchboard.cli.scaffold;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.switchboard.cli.CommandOutput;
import io.switchboard.cli.Main;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.w3c.dom.Element;

/**
 * What {@code ./switchboard new} writes, and what it refuses. That the project builds and serves is
 * {@link ScaffoldFlowTest}'s part.
 */
class NewCommandTest {
    @TempDir
    Path dir;

    @Test
    void writesAProjectThatImportsTheBomAndNamesTheImplementation() throws Exception {
        Path project = dir.resolve("stats");
        assertEquals(0, Main.run("new", project.toString(), "--component", "Stats", "--package", "org.acme.stats"));
        assertEquals(List.of(".gitignore", "README.md", "pom.xml", "src/main/java/org/acme/stats/StatsService.java",
                "src/main/xsd/stats.xsd", "src/test/java/org/acme/stats/StatsServiceTest.java",
                "src/test/resources/simplelogger.properties"), files(project));
        for (Path f : List.of(project.resolve("pom.xml"), project.resolve("src/main/xsd/stats.xsd"))) {
            Reactor.pom(f);   // well-formed XML, or this throws naming the file
        }
        Element pom = Reactor.pom(project.resolve("pom.xml"));
        assertEquals("org.acme.stats", Reactor.text(pom, "groupId"));
        assertEquals("stats", Reactor.text(pom, "artifactId"));
        assertEquals(Reactor.version(), Reactor.text(Reactor.child(pom, "properties"), "switchboard.version"));
        assertEquals(Map.of("switchboard-bom", "${switchboard.version}"),
                Reactor.managedSwitchboardArtifacts(project.resolve("pom.xml")));
        String pomText = Files.readString(project.resolve("pom.xml"));
        assertTrue(pomText.contains("<implementation>org.acme.stats.StatsService</implementation>"), pomText);
        assertTrue(pomText.contains("<artifactId>switchboard-server</artifactId>")
                && pomText.contains("<artifactId>switchboard-protocol-local</artifactId>"), pomText);
        String xsd = Files.readString(project.resolve("src/main/xsd/stats.xsd"));
        assertTrue(xsd.contains("name=\"Stats\"") && xsd.contains("<sb:operation name=\"sum\" idempotent=\"true\"/>")
                && xsd.contains("name=\"values\" type=\"xs:double\" minOccurs=\"0\" maxOccurs=\"unbounded\"")
                && xsd.contains("name=\"total\" type=\"xs:double\""), xsd);
        for (Path f : files(project).stream().map(project::resolve).toList()) {
            assertFalse(Files.readString(f).contains("{{"), "a placeholder was left in " + f);
        }
    }

    /** Maven 3.8's default plug-ins cannot build the project; it pins those the build itself uses. */
    @Test
    void theProjectPinsThePluginVersionsOfThisBuild() throws Exception {
        Path project = dir.resolve("p");
        ComponentProject.of("Stats", null).writeTo(project);
        Map<String, String> ours = Reactor.managedPlugins(Reactor.root().resolve("pom.xml"));
        Map<String, String> theirs = Reactor.managedPlugins(project.resolve("pom.xml"));
        assertTrue(theirs.keySet().containsAll(List.of("maven-compiler-plugin", "maven-surefire-plugin",
                "maven-resources-plugin", "maven-jar-plugin", "maven-dependency-plugin")), theirs.toString());
        theirs.forEach((plugin, version) -> assertEquals(ours.get(plugin), version, plugin));
    }

    @Test
    void thePackageDefaultsToOneNamedAfterTheComponent() throws Exception {
        Path project = dir.resolve("gauge");
        assertEquals(0, Main.run("new", project.toString(), "--component", "Gauge"));
        assertTrue(Files.exists(project.resolve("src/main/java/com/example/gauge/GaugeService.java")));
        assertTrue(Files.exists(project.resolve("src/main/xsd/gauge.xsd")));
    }

    @Test
    void refusesADirectoryInUseAndNamesThatWouldNotCompile() throws Exception {
        Path used = Files.createDirectories(dir.resolve("used"));
        Files.writeString(used.resolve("notes.txt"), "mine");
        assertRefused("exists and is not empty", "new", used.toString(), "--component", "Stats");
        assertEquals(List.of("notes.txt"), files(used), "nothing was written into it");
        Path file = Files.writeString(dir.resolve("a-file"), "x");
        assertRefused("is a file", "new", file.toString(), "--component", "Stats");

        Path fresh = dir.resolve("fresh");
        for (String name : List.of("stats", "1Stats", "Sta-ts", "Stäts", "")) {
            assertRefused("must start with a capital letter", "new", fresh.toString(), "--component", name);
        }
        assertRefused("generated for the operation sum", "new", fresh.toString(), "--component", "Sum");
        assertRefused("is a class of java.lang", "new", fresh.toString(), "--component", "String");
        for (String pkg : List.of("org.acme.1x", "org.int.x", "org..acme", "org.acme.", "org-acme")) {
            assertRefused("is not a Java package name", "new", fresh.toString(), "--component", "Stats",
                    "--package", pkg);
        }
        assertRefused("reserved for the JDK", "new", fresh.toString(), "--component", "Stats",
                "--package", "java.stats");
        assertFalse(Files.exists(fresh), "a refused project leaves nothing behind");
    }

    private static void assertRefused(String reason, String... args) {
        String message = CommandOutput.stderr(1, args);
        assertTrue(message.startsWith("error: ") && message.contains(reason), message);
    }

    private static List<String> files(Path root) throws IOException {
        try (Stream<Path> all = Files.walk(root)) {
            return all.filter(Files::isRegularFile).map(p -> root.relativize(p).toString().replace('\\', '/'))
                    .sorted().toList();
        }
    }
}
