package io.switchboard.spring.boot;

import io.switchboard.protocol.TokenFile;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.function.Supplier;

/** Secrets and tokens read from files; a message names the file, never what it holds. */
final class FileSecrets {
    private FileSecrets() {
    }

    /** The file's contents, stripped; null without a file. */
    static String read(Path file) {
        if (file == null) {
            return null;
        }
        try {
            String s = Files.readString(file, StandardCharsets.UTF_8).strip();
            if (s.isEmpty()) {
                throw new IllegalArgumentException("secret file " + file + " is empty");
            }
            return s;
        } catch (IOException e) {
            throw new UncheckedIOException("cannot read secret file " + file + ": " + e.getMessage(), e);
        }
    }

    /** The token in {@code file}, read now (an unreadable file fails the start) and again whenever it changes: tokens rotate. */
    static Supplier<String> token(Path file) {
        return TokenFile.read(file);
    }
}
