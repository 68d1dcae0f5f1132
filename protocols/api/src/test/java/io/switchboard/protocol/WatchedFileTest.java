package io.switchboard.protocol;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.nio.file.attribute.FileTime;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * {@link WatchedFile}: read once while the file stays as it was; read again when its time, size
 * or identity changes (a file of the same time and size renamed into place too); a content its
 * reader refuses, or a deleted file, keeps the read before, and is not read again until it changes.
 */
class WatchedFileTest {
    @TempDir
    Path dir;

    private final AtomicInteger reads = new AtomicInteger();

    private String read(Path file) {
        reads.incrementAndGet();
        try {
            String text = Files.readString(file);
            if (text.startsWith("bad")) {
                throw new IllegalArgumentException("bad content");
            }
            return text;
        } catch (java.io.IOException e) {
            throw new IllegalArgumentException(e.getMessage(), e);
        }
    }

    @Test
    void anUnchangedFileIsReadOnceAndAChangedOneAgain() throws Exception {
        Path file = Files.writeString(dir.resolve("f"), "one");
        WatchedFile<String> watched = new WatchedFile<>("test file", file, this::read);
        WatchedFile.Read<String> first = watched.current();
        assertSame(first, watched.current());
        assertEquals(1, reads.get());

        Files.writeString(file, "two!");   // another size
        WatchedFile.Read<String> second = watched.current();
        assertEquals("two!", second.value());
        assertEquals(first.generation() + 1, second.generation());
        assertSame(first, watched.generation(first.generation()), "the read before stays at hand");
        assertSame(second, watched.generation(second.generation()));
        assertEquals(null, watched.generation(second.generation() + 1));
    }

    @Test
    void aFileOfTheSameTimeAndSizeRenamedIntoPlaceIsReadAgain() throws Exception {
        Path file = Files.writeString(dir.resolve("f"), "aaa");
        FileTime time = Files.getLastModifiedTime(file);
        WatchedFile<String> watched = new WatchedFile<>("test file", file, this::read);
        Path next = Files.writeString(dir.resolve("f.next"), "bbb");
        Files.setLastModifiedTime(next, time);
        Files.move(next, file, StandardCopyOption.REPLACE_EXISTING, StandardCopyOption.ATOMIC_MOVE);
        assertEquals(time, Files.getLastModifiedTime(file));
        assertEquals("bbb", watched.current().value());
    }

    @Test
    void aRefusedContentOrADeletedFileKeepsTheReadBeforeAndIsNotReadAgainUntilItChanges() throws Exception {
        Path file = Files.writeString(dir.resolve("f"), "good");
        WatchedFile<String> watched = new WatchedFile<>("test file", file, this::read);
        Files.writeString(file, "bad content");
        assertEquals("good", watched.current().value());
        int readsAfterRefusal = reads.get();
        assertEquals("good", watched.current().value());
        assertEquals(readsAfterRefusal, reads.get(), "a refused content was read at every use");

        Files.delete(file);
        assertEquals("good", watched.current().value());
        Files.writeString(file, "better");
        assertEquals("better", watched.current().value());
    }

    @Test
    void theFirstReadIsStrict() throws Exception {
        IllegalArgumentException missing = assertThrows(IllegalArgumentException.class,
                () -> new WatchedFile<>("test file", dir.resolve("missing"), this::read));
        assertTrue(missing.getMessage().startsWith("cannot read the test file " + dir.resolve("missing")),
                missing.getMessage());
        Path bad = Files.writeString(dir.resolve("bad"), "bad");
        assertThrows(IllegalArgumentException.class, () -> new WatchedFile<>("test file", bad, this::read));
    }
}
