package io.switchboard.cli;

import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
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
