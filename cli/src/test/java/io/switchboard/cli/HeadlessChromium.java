package io.switchboard.cli;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.fail;

import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import io.switchboard.testing.Prerequisites;

/**
 * A real browser for tests: Debian's {@code chromium}, headless, a new profile per run.
 * {@code scripts/test-prerequisites.sh} (run once by {@code mvn verify}) installs it; a test that
 * finds it missing fails saying so, unless {@code SWITCHBOARD_TESTS_OFF=chromium} turns it off.
 */
final class HeadlessChromium {
    static final Path BINARY = Path.of("/usr/bin/chromium");
    private static final long TIMEOUT_SECONDS = 120;

    private HeadlessChromium() {
    }

    static void requireInstalled() {
        Prerequisites.require("chromium", Files.isExecutable(BINARY) ? null : "chromium is not installed at " + BINARY);
    }

    /** The page's DOM after its scripts ran for {@code virtualMillis} of virtual time. */
    static String dumpDom(String url, int virtualMillis) throws Exception {
        try (ScratchDirectory profile = ScratchDirectory.create("chromium-profile")) {
            List<String> args = new ArrayList<>(common(profile.path()));
            args.add("--virtual-time-budget=" + virtualMillis);
            args.add("--dump-dom");
            args.add(url);
            return run(args, TIMEOUT_SECONDS, true);
        }
    }

    /** A PNG of the page as a window of {@code width} × {@code height} shows it, after its scripts ran. */
    static void screenshot(String url, Path png, int width, int height, int virtualMillis) throws Exception {
        try (ScratchDirectory profile = ScratchDirectory.create("chromium-profile")) {
            List<String> args = new ArrayList<>(common(profile.path()));
            args.add("--virtual-time-budget=" + virtualMillis);
            args.add("--hide-scrollbars");
            args.add("--window-size=" + width + "," + height);
            args.add("--screenshot=" + png.toAbsolutePath());
            args.add(url);
            Files.deleteIfExists(png);
            run(args, TIMEOUT_SECONDS, true);
        }
        byte[] bytes = Files.readAllBytes(png);
        assertTrue(bytes.length > 1000, "a screenshot of " + bytes.length + " bytes");
        assertEquals((byte) 0x89, bytes[0]);
        assertEquals("PNG", new String(bytes, 1, 3, StandardCharsets.US_ASCII));
    }

    /** A new profile per run, removed after it: the browser keeps its state there. */
    private static List<String> common(Path profile) {
        return List.of(BINARY.toString(), "--headless", "--no-sandbox", "--disable-gpu", "--disable-quic",
                "--no-first-run", "--disable-background-networking", "--disable-component-update", "--disable-sync",
                "--no-proxy-server", "--user-data-dir=" + profile);
    }

    /**
     * Runs a command, returns its standard output (with its standard error when {@code check} is
     * false); with {@code check}, a non-zero exit fails the test showing both.
     */
    private static String run(List<String> command, long timeoutSeconds, boolean check) throws Exception {
        Path err = Files.createTempFile("chromium", ".err");
        Path out = Files.createTempFile("chromium", ".out");
        try {
            ProcessBuilder pb = new ProcessBuilder(command).redirectError(err.toFile()).redirectOutput(out.toFile());
            pb.environment().put("DEBIAN_FRONTEND", "noninteractive");
            Process p = pb.start();
            if (!p.waitFor(timeoutSeconds, TimeUnit.SECONDS)) {
                p.destroyForcibly();
                fail(command.get(0) + " did not finish in " + timeoutSeconds + " s: " + Files.readString(err));
            }
            String stdout = Files.readString(out, StandardCharsets.UTF_8);
            if (!check) {
                return stdout + Files.readString(err);
            }
            if (p.exitValue() != 0) {
                fail(String.join(" ", command) + " exited with " + p.exitValue() + ":\n" + Files.readString(err)
                        + stdout);
            }
            return stdout;
        } finally {
            Files.deleteIfExists(err);
            Files.deleteIfExists(out);
        }
    }
}
