package io.switchboard.cli;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Comparator;
import java.util.List;
import java.util.stream.Stream;

/**
 * A directory of a command's own under the temporary directory (the logs of the JVMs it starts, a
 * registry's file), removed with everything in it when the command is done, or stopped (Ctrl-C),
 * unless kept because a failure's logs are in it. A command run again and again leaves nothing behind.
 *
 * <pre>{@code
 * try (ScratchDirectory scratch = ScratchDirectory.create("switchboard-demo-")) {
 *     ... children log to scratch.path() ...
 *     if (failed) scratch.keep();
 * }
 * }</pre>
 */
final class ScratchDirectory implements AutoCloseable {
    private final Path path;
    private volatile boolean keep;
    /** Removes the directory if the JVM ends before {@link #close()} (a SIGTERM, Ctrl-C). */
    private final Thread atExit;

    private ScratchDirectory(Path path) {
        this.path = path;
        this.atExit = new Thread(() -> deleteTree(path), "scratch-directory-removal");
        Runtime.getRuntime().addShutdownHook(atExit);
    }

    static ScratchDirectory create(String prefix) {
        try {
            return new ScratchDirectory(Files.createTempDirectory(prefix));
        } catch (IOException e) {
            throw new UncheckedIOException("cannot make a directory under " + System.getProperty("java.io.tmpdir"), e);
        }
    }

    Path path() {
        return path;
    }

    /** Leaves the directory in place when closed: its logs explain a failure. */
    void keep() {
        keep = true;
        try {
            Runtime.getRuntime().removeShutdownHook(atExit);
        } catch (IllegalStateException shuttingDown) {
            // too late to keep it
        }
    }

    /** Removes the directory unless {@link #keep() kept}; close the processes writing into it first. */
    @Override
    public void close() {
        try {
            Runtime.getRuntime().removeShutdownHook(atExit);
        } catch (IllegalStateException shuttingDown) {
            return;   // the hook removes it
        }
        if (!keep) {
            deleteTree(path);
        }
    }

    /**
     * Removes {@code dir} and everything in it, as far as it can: what cannot be removed (a file a
     * process still holds on a system that locks files) is left, and the directory with it.
     *
     * @return whether {@code dir} is gone
     */
    static boolean deleteTree(Path dir) {
        if (!Files.exists(dir)) {
            return true;
        }
        List<Path> all;
        try (Stream<Path> walk = Files.walk(dir)) {
            all = walk.sorted(Comparator.reverseOrder()).toList();
        } catch (IOException | UncheckedIOException e) {
            return false;
        }
        for (Path p : all) {
            try {
                Files.deleteIfExists(p);
            } catch (IOException e) {
                // left in place; the directory stays with it
            }
        }
        return !Files.exists(dir);
    }
}
