package io.switchboard.protocol;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.FileTime;
import java.util.function.Supplier;

/**
 * A bearer token kept in a file, for {@link ClientSettings#withToken}: read when made, so that an
 * unreadable file fails at once, and again whenever the file's modification time changes, since
 * tokens rotate. A file larger than {@link #MAX_BYTES} is refused (it is not a token). Messages
 * name the file, never what it holds.
 *
 * <pre>{@code
 * ClientSettings s = ClientSettings.defaults().withTls(tls).withToken(TokenFile.read(Path.of("/run/secrets/token")));
 * }</pre>
 */
public final class TokenFile implements Supplier<String> {
    /** Far more than any JWT; a larger file is the wrong file. */
    public static final long MAX_BYTES = 64 * 1024;

    private final Path path;
    private FileTime readAt;
    private String token;

    private TokenFile(Path path) {
        this.path = path;
    }

    /** The token in {@code path}, read now and again whenever the file changes. */
    public static TokenFile read(Path path) {
        TokenFile file = new TokenFile(path);
        file.get();
        return file;
    }

    /** The token, stripped of surrounding white space; the file is read again when it has changed. */
    @Override
    public synchronized String get() {
        try {
            FileTime modified = Files.getLastModifiedTime(path);
            if (!modified.equals(readAt)) {
                long size = Files.size(path);
                if (size > MAX_BYTES) {
                    throw new IOException("it holds " + size + " bytes, more than a token's " + MAX_BYTES);
                }
                token = Files.readString(path, StandardCharsets.US_ASCII).strip();
                readAt = modified;
            }
            return token;
        } catch (IOException e) {
            throw new UncheckedIOException("cannot read token file " + path + ": " + e.getMessage(), e);
        }
    }
}
