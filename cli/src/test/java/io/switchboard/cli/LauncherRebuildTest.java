package io.switchboard.cli;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.FileTime;
import java.time.Instant;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The repository's {@code ./switchboard} rebuilds only when what goes into the jars changed: main
 * sources, schemas, resources and poms; not test sources, not examples/, not build output. Run on a
 * copy of the script in a made-up checkout whose files carry set modification times (no sleeps),
 * asking the script only whether a build is due ({@code SWITCHBOARD_LAUNCHER_CHECK=1}).
 */
class LauncherRebuildTest {
    private static final FileTime BUILT = FileTime.from(Instant.parse("2026-01-01T12:00:00Z"));
    private static final FileTime BEFORE = FileTime.from(Instant.parse("2026-01-01T11:00:00Z"));
    private static final FileTime AFTER = FileTime.from(Instant.parse("2026-01-01T13:00:00Z"));

    private static final List<String> CHECKOUT = List.of(
            "pom.xml", "cli/pom.xml",
            "cli/src/main/java/io/switchboard/cli/Main.java",
            "cli/src/main/resources/simplelogger.properties",
            "cli/src/main/resources-filtered/io/switchboard/cli/version.properties",
            "components/echo/src/main/xsd/echo.xsd",
            "protocols/grpc/src/main/proto/registry.proto",
            "cli/src/test/java/io/switchboard/cli/MainTest.java",
            "cli/src/test/resources/fixture.xsd",
            "examples/java-component/pom.xml",
            "examples/java-component/src/main/java/Example.java",
            "docs/guide.md",
            "bench/target/classes/io/switchboard/bench/Cell.class");

    @TempDir
    Path root;

    @BeforeEach
    void aCheckoutBuiltAfterItsLastEdit() throws IOException {
        Path checkout = Path.of(System.getProperty("basedir", System.getProperty("user.dir"))).toAbsolutePath().getParent();
        Files.copy(checkout.resolve("switchboard"), root.resolve("switchboard"));
        for (String file : CHECKOUT) {
            touch(file, BEFORE);
        }
        Files.createDirectories(root.resolve("cli/target/classes"));
        Files.createDirectories(root.resolve("cli/target/lib"));
        touch("cli/target/.launcher-built", BUILT);
    }

    @Test
    void nothingChangedSinceTheBuildNeedsNoBuild() throws Exception {
        assertFalse(buildDue());
    }

    @Test
    void mainSourcesSchemasResourcesAndPomsNeedABuild() throws Exception {
        for (String changed : List.of("pom.xml", "cli/pom.xml", "cli/src/main/java/io/switchboard/cli/Main.java",
                "cli/src/main/resources/simplelogger.properties",
                "cli/src/main/resources-filtered/io/switchboard/cli/version.properties",
                "components/echo/src/main/xsd/echo.xsd", "protocols/grpc/src/main/proto/registry.proto")) {
            touch(changed, AFTER);
            assertTrue(buildDue(), changed + " changed: a build is due");
            touch(changed, BEFORE);
        }
    }

    @Test
    void testSourcesExamplesDocsAndBuildOutputNeedNoBuild() throws Exception {
        for (String changed : List.of("cli/src/test/java/io/switchboard/cli/MainTest.java",
                "cli/src/test/resources/fixture.xsd", "examples/java-component/pom.xml",
                "examples/java-component/src/main/java/Example.java", "docs/guide.md",
                "bench/target/classes/io/switchboard/bench/Cell.class")) {
            touch(changed, AFTER);
            assertFalse(buildDue(), changed + " changed: no build");
        }
    }

    @Test
    void aMissingStampOrBuildOutputNeedsABuild() throws Exception {
        Files.delete(root.resolve("cli/target/lib"));
        assertTrue(buildDue(), "no lib/: a build is due");
        Files.createDirectories(root.resolve("cli/target/lib"));
        Files.delete(root.resolve("cli/target/.launcher-built"));
        assertTrue(buildDue(), "never built: a build is due");
    }

    /**
     * Two launchers started together after a change run one build: the second waits for the
     * first's and then finds nothing left to build. Maven and Java are stand-ins on the PATH: the
     * build logs its start and end and ends when the test says so; Java says it ran.
     */
    @Test
    void launchersStartedTogetherRunOneBuild() throws Exception {
        touch("cli/src/main/java/io/switchboard/cli/Main.java", AFTER);
        Path bin = Files.createDirectories(root.resolve("fake-bin"));
        Path log = root.resolve("builds.log");
        Path release = root.resolve("release-the-build");
        script(bin.resolve("mvn"), "echo start >> '" + log + "'\n"
                + "while [ ! -e '" + release + "' ]; do sleep 0.02; done\n"
                + "echo end >> '" + log + "'\n");
        script(bin.resolve("java"), "echo ran \"${@: -1}\"\n");

        Process first = launcher(bin, "--version");
        Process second = null;
        try {
            long end = System.nanoTime() + TimeUnit.SECONDS.toNanos(30);
            while (!Files.exists(log) || !Files.readString(log).contains("start")) {
                assertTrue(System.nanoTime() < end, "the first launcher's build did not start");
                Thread.sleep(10);
            }
            second = launcher(bin, "--help");
            BufferedReader err = new BufferedReader(new InputStreamReader(second.getErrorStream(), StandardCharsets.UTF_8));
            String said = err.readLine();   // its first word, before the first build may end
            assertEquals("switchboard: waiting for the build another ./switchboard is running...", said);
            Files.createFile(release);
            assertTrue(first.waitFor(60, TimeUnit.SECONDS) && second.waitFor(60, TimeUnit.SECONDS), "both launchers end");
            assertEquals(0, first.exitValue());
            assertEquals(0, second.exitValue());
            assertEquals("ran --help", new String(second.getInputStream().readAllBytes(), StandardCharsets.UTF_8).trim());
        } finally {
            if (!Files.exists(release)) {
                Files.createFile(release);   // a failed check leaves no stand-in build waiting
            }
            end(first);
            end(second);
        }
        assertEquals(List.of("start", "end"), Files.readAllLines(log), "one build");
    }

    @Test
    void oneShotCommandsAskForTheJitsFirstTierAloneAndTheOthersForTheJvmsDefaults() throws Exception {
        Path fakeBin = Files.createDirectories(root.resolve("fake-bin"));
        script(fakeBin.resolve("java"), "echo \"$@\"\n");   // says what the launcher would run
        for (String oneShot : List.of("--version", "-V", "--help", "-h", "help", "call", "list", "lookup", "compile", "new")) {
            assertEquals("-XX:TieredStopAtLevel=1 -cp", javaOptions(fakeBin, oneShot, ""), oneShot);
        }
        for (String lasting : List.of("registry", "serve", "demo", "bench", "load", "top", "registry-bench")) {
            assertEquals("-cp", javaOptions(fakeBin, lasting, ""), lasting);
        }
        assertEquals("-XX:TieredStopAtLevel=1 -XX:TieredStopAtLevel=4 -cp", javaOptions(fakeBin, "call", "-XX:TieredStopAtLevel=4"),
                "SWITCHBOARD_JAVA_OPTS comes after, so it has the last word");
    }

    /** The options the launcher gives java for {@code command}, up to its class path. */
    private String javaOptions(Path fakeBin, String command, String javaOpts) throws Exception {
        ProcessBuilder pb = new ProcessBuilder("bash", root.resolve("switchboard").toString(), command).redirectErrorStream(true);
        pb.environment().put("PATH", fakeBin + java.io.File.pathSeparator + System.getenv("PATH"));
        pb.environment().put("SWITCHBOARD_JAVA_OPTS", javaOpts);
        Process p = pb.start();
        String output = " " + new String(p.getInputStream().readAllBytes()).trim();
        assertTrue(p.waitFor(60, TimeUnit.SECONDS) && p.exitValue() == 0, output);
        assertTrue(output.contains(" -cp "), output);
        return output.substring(0, output.indexOf(" -cp ") + " -cp".length()).trim();
    }

    /** Lets a launcher end, then ends whatever of it is left, its stand-in build included. */
    private static void end(Process launcher) throws InterruptedException {
        if (launcher != null && !launcher.waitFor(10, TimeUnit.SECONDS)) {
            launcher.descendants().forEach(ProcessHandle::destroyForcibly);
            launcher.destroyForcibly();
        }
    }

    private static void script(Path file, String body) throws IOException {
        Files.writeString(file, "#!/usr/bin/env bash\n" + body);
        assertTrue(file.toFile().setExecutable(true));
    }

    private Process launcher(Path fakeBin, String command) throws IOException {
        ProcessBuilder pb = new ProcessBuilder("bash", root.resolve("switchboard").toString(), command);
        pb.environment().put("PATH", fakeBin + java.io.File.pathSeparator + System.getenv("PATH"));
        return pb.start();
    }

    private void touch(String file, FileTime time) throws IOException {
        Path path = root.resolve(file);
        Files.createDirectories(path.getParent());
        if (!Files.exists(path)) {
            Files.writeString(path, "x\n");
        }
        Files.setLastModifiedTime(path, time);
    }

    /** Exit 0: the script would build; 1: it would run what is built. */
    private boolean buildDue() throws Exception {
        ProcessBuilder pb = new ProcessBuilder("bash", root.resolve("switchboard").toString()).redirectErrorStream(true);
        pb.environment().put("SWITCHBOARD_LAUNCHER_CHECK", "1");
        Process p = pb.start();
        assertTrue(p.waitFor(60, TimeUnit.SECONDS), "the check ends");
        String output = new String(p.getInputStream().readAllBytes());
        assertTrue(p.exitValue() == 0 || p.exitValue() == 1, "exit " + p.exitValue() + ": " + output);
        return p.exitValue() == 0;
    }
}
