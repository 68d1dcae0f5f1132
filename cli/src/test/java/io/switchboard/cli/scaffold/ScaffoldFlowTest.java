package io.switchboard.cli.scaffold;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.switchboard.cli.CommandOutput;
import io.switchboard.cli.Main;
import io.switchboard.registry.RegistryClient;
import io.switchboard.registry.server.RegistryServer;
import io.switchboard.testing.ChildJvm;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * A team's own component, the whole way a user goes, outside this repository: {@code new} writes the
 * project; a plain {@code mvn package} there builds it and passes its generated test; {@code serve
 * --classpath} (a child JVM) binds it in a registry; {@code call} gets the sum; and the project's
 * dependency tree holds no ZooKeeper or Curator.
 *
 * <p>The project's Maven gets this build's Switchboard jars and poms from a {@link
 * PrivateMavenRepository} (never the shared ~/.m2, which other builds use), and runs offline when
 * the reactor build left every third-party artifact it needs in the shared repository; otherwise
 * online, once. Needs the other modules built (the reactor runs cli last).
 */
class ScaffoldFlowTest {
    private final List<Process> processes = new ArrayList<>();

    @TempDir
    Path tmp;

    @AfterEach
    void stopChildren() {
        processes.forEach(Process::destroyForcibly);
    }

    @Test
    @Timeout(value = 6, unit = TimeUnit.MINUTES)
    void aComponentOfOnesOwnIsWrittenBuiltServedAndCalled() throws Exception {
        Path project = tmp.resolve("work/stats");
        assertFalse(project.toAbsolutePath().startsWith(Reactor.root()), "the project lives outside the repository");
        assertEquals(0, Main.run("new", project.toString(), "--component", "Stats", "--package", "org.acme.stats"));

        Path repository = PrivateMavenRepository.create(Files.createDirectories(tmp.resolve("m2")),
                PrivateMavenRepository.shared());
        String build = ChildMaven.build(project, repository, tmp.resolve("maven"), "package", "dependency:tree",
                "-DoutputFile=target/dependency-tree.txt");
        assertTrue(build.contains("Running org.acme.stats.StatsServiceTest")
                && build.contains("Tests run: 1, Failures: 0, Errors: 0, Skipped: 0"),
                "the generated test ran:\n" + build);
        Path jar = project.resolve("target/stats-1.0-SNAPSHOT.jar");
        assertTrue(Files.exists(jar), build);

        String tree = Files.readString(project.resolve("target/dependency-tree.txt"));
        assertTrue(tree.contains("io.switchboard:switchboard-server:jar"), tree);
        assertFalse(tree.toLowerCase(Locale.ROOT).contains("zookeeper"), "no ZooKeeper:\n" + tree);
        assertFalse(tree.toLowerCase(Locale.ROOT).contains("curator"), "no Curator:\n" + tree);

        try (RegistryServer registry = RegistryServer.builder().start();
             RegistryClient reader = RegistryClient.connect(registry.endpoint())) {
            Process serve = java("serve", "Stats", "--classpath", jar.toString(), "--registry", registry.endpoint());
            String serving;
            try {
                serving = CommandOutput.awaitLine(serve, "serving");
            } catch (IllegalStateException e) {
                throw new AssertionError(e.getMessage() + "; its errors:\n"
                        + Files.readString(tmp.resolve("serve-stderr.txt")), e);
            }
            assertTrue(serving.startsWith("Stats "), serving);
            assertEquals(1, reader.lookup("Stats").size(), "bound in the registry");

            assertEquals("total = 3.5", CommandOutput.stdout(0, "call", "Stats", "sum", "values=1.5 2.5 -0.5",
                    "--registry", registry.endpoint()).strip());

            serve.destroy();   // SIGTERM, as Ctrl-C
            assertTrue(serve.waitFor(30, TimeUnit.SECONDS), "serve stops on SIGTERM");
            assertTrue(reader.lookup("Stats").isEmpty(), "and unbinds the component first");
        }
    }

    /** The command line in a JVM of its own, as {@code ./switchboard} starts it. */
    private Process java(String... args) throws IOException {
        List<String> cmd = ChildJvm.javaCommand(List.of("-Xmx256m"), Main.class, args);
        Process p = new ProcessBuilder(cmd).redirectError(tmp.resolve("serve-stderr.txt").toFile()).start();
        processes.add(p);
        return p;
    }
}
