package io.switchboard.testing;

import java.io.IOException;
import java.nio.channels.FileChannel;
import java.nio.channels.FileLock;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.nio.file.StandardOpenOption;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.time.Clock;
import java.time.LocalDate;
import java.time.ZoneOffset;
import java.util.HexFormat;
import java.util.stream.Stream;

/**
 * A directory of files that every test JVM of a build reads and one of them makes: one per UTC
 * day and recipe, {@code ROOT/DAY-DIGEST}. The first JVM to ask makes it under a file lock (the
 * others wait for it, instead of all making their own at once) in a directory of its own and
 * renames it into place whole, so no reader ever sees half of it. A new day or a changed recipe
 * gets a new directory; those two days old or more are deleted.
 *
 * <pre>{@code
 * Path stores = SharedStores.in(root, rounds, TestCertificates::make);   // the same directory in every JVM today
 * }</pre>
 */
final class SharedStores {
    /** What makes the files of a recipe in an empty directory. */
    interface Maker<R> {
        void make(Path dir, R recipe) throws IOException;
    }

    private SharedStores() {
    }

    static <R> Path in(Path root, R recipe, Maker<R> maker) throws IOException {
        return in(root, recipe, maker, Clock.systemUTC());
    }

    /** Synchronized: the file lock keeps other JVMs out, not this JVM's other threads. */
    static synchronized <R> Path in(Path root, R recipe, Maker<R> maker, Clock clock) throws IOException {
        LocalDate today = LocalDate.now(clock.withZone(ZoneOffset.UTC));
        Path dir = root.resolve(today + "-" + digest(recipe.toString()));
        if (Files.isDirectory(dir)) {
            return dir;   // only a whole one is ever renamed into place
        }
        Files.createDirectories(root);
        try (FileChannel channel = FileChannel.open(root.resolve("lock"), StandardOpenOption.CREATE,
                StandardOpenOption.WRITE); FileLock held = channel.lock()) {
            if (!Files.isDirectory(dir)) {
                deleteOld(root, today);
                Path work = Files.createTempDirectory(root, "making-");
                maker.make(work, recipe);
                Files.move(work, dir, StandardCopyOption.ATOMIC_MOVE);
            }
        }
        return dir;
    }

    /** Called under the lock: what a JVM that died while making left, and the days before yesterday. */
    private static void deleteOld(Path root, LocalDate today) throws IOException {
        try (Stream<Path> entries = Files.list(root)) {
            for (Path entry : entries.toList()) {
                String name = entry.getFileName().toString();
                boolean recent = name.startsWith(today.toString()) || name.startsWith(today.minusDays(1).toString());
                if (Files.isDirectory(entry) && !recent) {
                    deleteTree(entry);
                }
            }
        }
    }

    private static void deleteTree(Path dir) throws IOException {
        try (Stream<Path> files = Files.list(dir)) {
            for (Path f : files.toList()) {
                if (Files.isDirectory(f)) {
                    deleteTree(f);
                } else {
                    Files.deleteIfExists(f);
                }
            }
        }
        Files.deleteIfExists(dir);
    }

    static String digest(String recipe) {
        try {
            byte[] sha = MessageDigest.getInstance("SHA-256").digest(recipe.getBytes(StandardCharsets.UTF_8));
            return HexFormat.of().formatHex(sha, 0, 8);
        } catch (NoSuchAlgorithmException e) {
            throw new IllegalStateException("every JDK has SHA-256", e);
        }
    }
}
