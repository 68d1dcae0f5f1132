package io.switchboard.cli;

import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.switchboard.bench.ChildJvm;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

/**
 * A command's scratch directory: gone with its contents when done or when its JVM is stopped,
 * kept when a failure's logs are in it.
 */
class ScratchDirectoryTest {
    /** Makes a scratch directory with a file in it, says where, and waits to be stopped. */
    public static final class Holder {
        public static void main(String[] args) throws Exception {
            ScratchDirectory scratch = ScratchDirectory.create("scratch-test-");
            Files.writeString(scratch.path().resolve("worker-0.log"), "READY\n");
            System.out.println("SCRATCH " + scratch.path());
            System.out.flush();
            Thread.sleep(Long.MAX_VALUE);
        }
    }

    @Test
    void removedWhenItsJvmIsStopped() throws Exception {
        Process holder = new ProcessBuilder(ChildJvm.javaCommand(ChildJvm.QUICK_FLAGS, Holder.class))
                .redirectError(ProcessBuilder.Redirect.INHERIT).start();
        try {
            Path dir = Path.of(ChildJvm.awaitLine(holder, "SCRATCH ", "the scratch holder").substring("SCRATCH ".length()));
            assertTrue(Files.exists(dir.resolve("worker-0.log")));
            holder.destroy();   // SIGTERM, as Ctrl-C would
            assertTrue(holder.waitFor(30, TimeUnit.SECONDS));
            assertFalse(Files.exists(dir), dir + " left behind by a stopped command");
        } finally {
            holder.destroyForcibly();
        }
    }

    @Test
    void removedWithEverythingInItWhenClosed() throws Exception {
        Path dir;
        try (ScratchDirectory scratch = ScratchDirectory.create("scratch-test-")) {
            dir = scratch.path();
            Files.writeString(Files.createDirectories(dir.resolve("worker/logs")).resolve("worker-0.log"), "READY\n");
            Files.writeString(dir.resolve("registry.json"), "{}");
        }
        assertFalse(Files.exists(dir), dir + " left behind");
    }

    @Test
    void keptWhenAFailuresLogsAreInIt() throws Exception {
        Path dir;
        try (ScratchDirectory scratch = ScratchDirectory.create("scratch-test-")) {
            dir = scratch.path();
            Files.writeString(dir.resolve("worker-0.log"), "failed\n");
            scratch.keep();
        }
        try {
            assertTrue(Files.exists(dir.resolve("worker-0.log")));
        } finally {
            assertTrue(ScratchDirectory.deleteTree(dir));
        }
    }
}
