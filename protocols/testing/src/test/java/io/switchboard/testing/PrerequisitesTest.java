package io.switchboard.testing;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.io.OutputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * A check that finds its program missing waits for the script's background install to end (its
 * flock on target/test-prerequisites.lock), then looks again; a failed install is named in the
 * failure with the end of its log.
 */
class PrerequisitesTest {
    @TempDir
    Path root;

    @Test
    void noBackgroundInstallMeansNothingToWaitFor() {
        assertNull(Prerequisites.awaitBackgroundInstall(root));
    }

    @Test
    void aRunningInstallIsWaitedForAndItsSuccessIsNoFailure() throws Exception {
        try (HeldInstall install = HeldInstall.start(root, 0, "grpcurl built")) {
            CompletableFuture<String> waited = CompletableFuture.supplyAsync(() -> Prerequisites.awaitBackgroundInstall(root));
            assertFalse(waited.isDone(), "returned while the install held its lock");
            install.finish();
            assertNull(waited.get(30, TimeUnit.SECONDS));
        }
    }

    @Test
    void aFailedInstallIsNamedWithTheEndOfItsLog() throws Exception {
        try (HeldInstall install = HeldInstall.start(root, 100, "E: Unable to locate package chromium")) {
            install.finish();
            String failure = Prerequisites.awaitBackgroundInstall(root);
            assertTrue(failure.contains("exit status 100"), failure);
            assertTrue(failure.contains("E: Unable to locate package chromium"), failure);
        }
    }

    @Test
    void aCheckIsAskedAgainAfterTheInstallEnds() throws Exception {
        AtomicInteger asked = new AtomicInteger();
        try (HeldInstall install = HeldInstall.start(root, 100, "go: module lookup disabled")) {
            CompletableFuture<Void> required = CompletableFuture.runAsync(() -> Prerequisites.require("example",
                    () -> asked.incrementAndGet() == 1 ? "grpcurl is missing" : null, root));
            install.finish();
            required.get(30, TimeUnit.SECONDS);   // there the second time: no failure, whatever the install said
        }
        assertEquals(2, asked.get());
        AssertionError still = assertThrows(AssertionError.class,
                () -> Prerequisites.require("example", () -> "grpcurl is missing", root));
        assertTrue(still.getMessage().startsWith("grpcurl is missing. the background install failed (exit status 100)"),
                still.getMessage());
        assertTrue(still.getMessage().contains("go: module lookup disabled"), still.getMessage());
    }

    /** A stand-in for the script's background install: holds the lock until told to end with a status. */
    private static final class HeldInstall implements AutoCloseable {
        private final Process process;

        private HeldInstall(Process process) {
            this.process = process;
        }

        static HeldInstall start(Path root, int status, String logLine) throws Exception {
            Files.createDirectories(root.resolve("target"));
            Files.writeString(root.resolve(Prerequisites.BACKGROUND_LOG), "starting\n" + logLine + "\n", StandardCharsets.UTF_8);
            Process p = new ProcessBuilder("flock", root.resolve(Prerequisites.BACKGROUND_LOCK).toString(), "sh", "-c",
                    "echo held; read line; echo " + status + " > '" + root.resolve(Prerequisites.BACKGROUND_STATUS) + "'")
                    .redirectError(ProcessBuilder.Redirect.INHERIT).start();
            BufferedReader out = new BufferedReader(new InputStreamReader(p.getInputStream(), StandardCharsets.UTF_8));
            assertEquals("held", out.readLine(), "the stand-in did not take the lock");
            return new HeldInstall(p);
        }

        void finish() throws Exception {
            try (OutputStream in = process.getOutputStream()) {
                in.write('\n');
            }
            assertTrue(process.waitFor(30, TimeUnit.SECONDS), "the stand-in did not end");
        }

        @Override
        public void close() {
            process.destroyForcibly();
        }
    }
}
