package io.switchboard.testing;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Arrays;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.function.Supplier;
import org.junit.jupiter.api.Assumptions;

/**
 * What a test needs from outside Java (a program, root, network namespaces): present, or the test
 * fails saying what is missing. {@code scripts/test-prerequisites.sh}, which {@code mvn verify}
 * runs once before the tests, installs the programs; no test installs anything. The one way to
 * leave such tests out is explicit: {@code SWITCHBOARD_TESTS_OFF=chromium,grpcurl,python,multihost}
 * (any of them) reports them as skipped with that reason.
 *
 * <p>{@code mvn verify} has the script install what only the last modules' tests run (the
 * package's venv, grpcurl, Chromium) in the background, so that the modules before them need not
 * wait: a check that finds its program missing waits for that install to end, then looks again.
 *
 * <pre>{@code
 * Prerequisites.require("grpcurl", () -> Files.isExecutable(binary) ? null : "grpcurl is not installed at " + binary);
 * }</pre>
 */
public final class Prerequisites {
    /** The environment variable that turns groups of tests off, comma-separated. */
    public static final String OFF = "SWITCHBOARD_TESTS_OFF";

    /** Held by the script's background install while it runs (flock), under the repository's target/. */
    static final String BACKGROUND_LOCK = "target/test-prerequisites.lock";
    /** The background install's exit status, written as it ends. */
    static final String BACKGROUND_STATUS = "target/test-prerequisites.status";
    /** The background install's output. */
    static final String BACKGROUND_LOG = "target/test-prerequisites.log";

    private static final long BACKGROUND_WAIT_SECONDS = 1200;

    private Prerequisites() {
    }

    /**
     * Returns when {@code missing} is null (all there); otherwise skips the test if {@code group}
     * is turned off by {@value #OFF}, and fails it with {@code missing} if not. For what nothing
     * installs (root, network namespaces); a program the script installs takes the other form.
     */
    public static void require(String group, String missing) {
        require(group, () -> missing);
    }

    /**
     * Returns when {@code check} answers null (all there); otherwise skips the test if
     * {@code group} is turned off by {@value #OFF}, or else waits for the script's background
     * install, if one ran, to end and checks again: still missing, the test fails with the
     * check's answer (and the install's failure, if it failed).
     */
    public static void require(String group, Supplier<String> check) {
        require(group, check, PythonPeers.repositoryRoot());
    }

    static void require(String group, Supplier<String> check, Path root) {
        String missing = check.get();
        if (missing == null) {
            return;
        }
        if (off(group)) {
            Assumptions.abort(group + " tests are off (" + OFF + "=" + System.getenv(OFF) + "): " + missing);
        }
        String install = awaitBackgroundInstall(root);
        missing = check.get();
        if (missing == null) {
            return;
        }
        throw new AssertionError(missing + (install == null ? "" : ". " + install)
                + ". scripts/test-prerequisites.sh installs what can be installed (mvn verify runs it); "
                + OFF + "=" + group + " turns these tests off.");
    }

    /** Whether {@value #OFF} names {@code group}. */
    public static boolean off(String group) {
        String v = System.getenv(OFF);
        return v != null && Arrays.stream(v.split(",")).map(String::strip).anyMatch(group::equals);
    }

    /**
     * Waits until no background install of the script holds its lock under {@code root}; null when
     * none ran or the last one succeeded, else what went wrong (with the end of its log).
     */
    static String awaitBackgroundInstall(Path root) {
        Path lock = root.resolve(BACKGROUND_LOCK);
        if (!Files.exists(lock)) {
            return null;
        }
        try {
            // the script holds the lock with flock(1), which Java's FileLock (fcntl) does not see
            Process flock = new ProcessBuilder("flock", "-w", Long.toString(BACKGROUND_WAIT_SECONDS), lock.toString(), "true")
                    .redirectErrorStream(true).redirectOutput(ProcessBuilder.Redirect.DISCARD).start();
            if (!flock.waitFor(BACKGROUND_WAIT_SECONDS + 10, TimeUnit.SECONDS)) {
                flock.destroyForcibly().waitFor();
            }
            if (flock.exitValue() != 0) {
                return "the background install (" + BACKGROUND_LOG + ") did not end within " + BACKGROUND_WAIT_SECONDS + " s";
            }
            Path status = root.resolve(BACKGROUND_STATUS);
            String code = Files.exists(status) ? Files.readString(status, StandardCharsets.UTF_8).strip() : "none";
            if (code.equals("0")) {
                return null;
            }
            List<String> log = Files.exists(root.resolve(BACKGROUND_LOG))
                    ? Files.readAllLines(root.resolve(BACKGROUND_LOG), StandardCharsets.UTF_8) : List.of();
            return "the background install failed (exit status " + code + "); the end of " + BACKGROUND_LOG + ":\n"
                    + String.join("\n", log.subList(Math.max(0, log.size() - 20), log.size()));
        } catch (IOException e) {
            return "cannot wait for the background install: " + e;
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            return "interrupted while waiting for the background install";
        }
    }
}
