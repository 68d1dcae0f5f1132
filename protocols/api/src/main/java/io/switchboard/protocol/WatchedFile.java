package io.switchboard.protocol;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.BasicFileAttributes;
import java.util.List;
import java.util.function.Function;

/**
 * What a TLS file (a key store, a trust store, a revocation list) holds, read again at the next
 * use when the file changes (its modification time, its size, or the file itself: one renamed
 * into place): certificates are rotated, and lists renewed, without a restart. The first read is
 * strict: its failure is the caller's {@link IllegalArgumentException}. A later content that
 * cannot be used, or a file gone, is refused, said once, and what was read before stays in force.
 */
final class WatchedFile<T> {
    private static final System.Logger LOG = System.getLogger(WatchedFile.class.getName());

    private final String what;
    private final Path file;
    private final Function<Path, T> read;
    private volatile Read<T> current;
    /** The read before {@link #current}: a TLS handshake that began on it finishes on it. */
    private volatile Read<T> previous;
    /** The file's state when a read was refused: the refusal is said once, not at every use. */
    private volatile Object refused;

    /** One read of the file: the state it was read in, its number (from 1), and what it held. */
    record Read<T>(List<Object> state, long generation, T value) {
    }

    /**
     * Reads {@code file} ({@code what} names it in messages: "key store") with {@code read}, which
     * throws {@link IllegalArgumentException} saying why the content cannot be used.
     */
    WatchedFile(String what, Path file, Function<Path, T> read) {
        this.what = what;
        this.file = file;
        this.read = read;
        BasicFileAttributes seen;
        try {
            seen = Files.readAttributes(file, BasicFileAttributes.class);
        } catch (IOException e) {
            throw new IllegalArgumentException("cannot read the " + what + " " + file + ": " + e.getMessage(), e);
        }
        this.current = new Read<>(state(seen), 1, read.apply(file));
    }

    /** What the file holds now: read again first when it changed since the last read. */
    Read<T> current() {
        Read<T> loaded = current;
        BasicFileAttributes now;
        try {
            now = Files.readAttributes(file, BasicFileAttributes.class);
        } catch (IOException e) {
            refuse(e.toString(), "cannot be read: " + e.getMessage());
            return loaded;
        }
        if (unchanged(loaded, now)) {
            return loaded;
        }
        synchronized (this) {
            loaded = current;
            if (unchanged(loaded, now) || state(now).equals(refused)) {
                return loaded;
            }
            try {
                Read<T> next = new Read<>(state(now), loaded.generation() + 1, read.apply(file));
                previous = loaded;
                current = loaded = next;
                LOG.log(System.Logger.Level.INFO, "read the " + what + " " + file + " again");
            } catch (IllegalArgumentException e) {
                refuse(state(now), "was refused: " + e.getMessage());
            }
            return loaded;
        }
    }

    /** The read numbered {@code generation} if it is the current or the one before it, else null. */
    Read<T> generation(long generation) {
        Read<T> c = current;
        if (c.generation() == generation) {
            return c;
        }
        Read<T> p = previous;
        return p != null && p.generation() == generation ? p : null;
    }

    private static boolean unchanged(Read<?> loaded, BasicFileAttributes now) {
        return state(now).equals(loaded.state());
    }

    /** What tells one content of the file from another without reading it: its time, size and identity. */
    private static List<Object> state(BasicFileAttributes a) {
        return java.util.Arrays.asList(a.lastModifiedTime(), a.size(), a.fileKey());   // fileKey may be null
    }

    private void refuse(Object state, String why) {
        if (!state.equals(refused)) {
            refused = state;
            LOG.log(System.Logger.Level.WARNING, "the " + what + " " + file + " " + why
                    + "; what was read before stays in force");
        }
    }
}
