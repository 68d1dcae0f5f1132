package io.switchboard.protocol;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.BasicFileAttributes;
import java.nio.file.attribute.FileTime;
import java.util.Objects;
import java.util.function.LongSupplier;
import java.util.function.Supplier;

/**
 * A bearer token kept in a file, for {@link ClientSettings#withToken}: read when made, so that an
 * unreadable file fails at once, and again whenever the file changes (its modification time, its
 * size, or the file itself: another renamed over it), since tokens rotate. A file larger than {@link #MAX_BYTES} is refused (it is not a token). Messages
 * name the file, never what it holds.
 *
 * <p>Rotate by writing the new token to another file and renaming it over this one (as
 * Kubernetes does with secrets). A file rewritten in place is read half-way at worst: while it
 * was modified less than {@link #SETTLE_MILLIS} ago it is read again on every call, so a read
 * that caught it half-written is corrected by the next call even when the rest of the write kept
 * the same modification time, and while it is empty (truncated for the rewrite) the token before
 * it stands. A file empty for longer fails.
 *
 * <pre>{@code
 * ClientSettings s = ClientSettings.defaults().withTls(tls).withToken(TokenFile.read(Path.of("/run/secrets/token")));
 * }</pre>
 */
public final class TokenFile implements Supplier<String> {
    /** Far more than any JWT; a larger file is the wrong file. */
    public static final long MAX_BYTES = 64 * 1024;
    /** A file modified this recently may still be being written. */
    public static final long SETTLE_MILLIS = 2_000;

    private final Path path;
    private final LongSupplier nowMillis;
    /** The file's modification time, size and identity when last read. */
    private FileTime readAt;
    private long readSize;
    private Object readKey;
    /** Whether the file was older than {@link #SETTLE_MILLIS} when last read: then it is read again only once it changes. */
    private boolean settled;
    private String token;

    private TokenFile(Path path, LongSupplier nowMillis) {
        this.path = path;
        this.nowMillis = nowMillis;
    }

    /** The token in {@code path}, read now and again whenever the file changes. */
    public static TokenFile read(Path path) {
        return read(path, System::currentTimeMillis);
    }

    /** With the wall clock that tells a recent file from a settled one (tests pass a fake one). */
    static TokenFile read(Path path, LongSupplier nowMillis) {
        TokenFile file = new TokenFile(path, nowMillis);
        file.get();
        return file;
    }

    /** The token, stripped of surrounding white space; the file is read again when it has changed. */
    @Override
    public synchronized String get() {
        try {
            BasicFileAttributes attributes = Files.readAttributes(path, BasicFileAttributes.class);
            FileTime modified = attributes.lastModifiedTime();
            long size = attributes.size();
            if (settled && modified.equals(readAt) && size == readSize && Objects.equals(attributes.fileKey(), readKey)) {
                return token;
            }
            if (size > MAX_BYTES) {
                throw new IOException("it holds " + size + " bytes, more than a token's " + MAX_BYTES);
            }
            String read = Files.readString(path, StandardCharsets.US_ASCII).strip();
            // a time far ahead (a skewed file server's) counts as settled, or the file would be read on every call
            boolean recent = Math.abs(nowMillis.getAsLong() - modified.toMillis()) < SETTLE_MILLIS;
            if (read.isEmpty()) {
                if (token != null && recent) {
                    return token;   // truncated for a rewrite: the token before it stands until the new one is in
                }
                throw new IOException("it is empty");
            }
            token = read;
            readAt = modified;
            readSize = size;
            readKey = attributes.fileKey();
            settled = !recent;
            return token;
        } catch (IOException e) {
            throw new UncheckedIOException("cannot read token file " + path + ": " + e.getMessage(), e);
        }
    }
}
