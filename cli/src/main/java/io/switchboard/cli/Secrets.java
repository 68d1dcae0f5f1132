package io.switchboard.cli;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;

/**
 * Where the command line finds the registry's shared secret: a file named on the command line, or
 * the {@code SWITCHBOARD_SECRET} environment variable. Never printed, never logged.
 */
final class Secrets {
    static final String ENV = "SWITCHBOARD_SECRET";

    private Secrets() {
    }

    static String read(Path file) {
        if (file != null) {
            try {
                String s = Files.readString(file, StandardCharsets.UTF_8).strip();
                if (s.isEmpty()) {
                    throw new IllegalArgumentException("secret file " + file + " is empty");
                }
                return s;
            } catch (IOException e) {
                throw new IllegalArgumentException("cannot read secret file " + file + ": " + e.getMessage(), e);
            }
        }
        String env = System.getenv(ENV);
        return env == null || env.isBlank() ? null : env.strip();
    }
}
