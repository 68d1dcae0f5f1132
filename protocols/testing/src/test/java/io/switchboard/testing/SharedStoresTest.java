package io.switchboard.testing;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Clock;
import java.time.Instant;
import java.time.ZoneOffset;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class SharedStoresTest {
    private static final Clock NOV_29 = Clock.fixed(Instant.parse("2026-11-29T12:00:00Z"), ZoneOffset.UTC);

    @TempDir
    Path root;

    private final AtomicInteger made = new AtomicInteger();

    private void make(Path dir, String recipe) throws IOException {
        made.incrementAndGet();
        Files.writeString(dir.resolve("a"), recipe);
        Files.writeString(dir.resolve("b"), recipe + recipe);
    }

    @Test
    void theFirstCallMakesTheFilesAndTheNextOnesReadThem() throws Exception {
        Path first = SharedStores.in(root, "recipe", this::make, NOV_29);
        Path again = SharedStores.in(root, "recipe", this::make, NOV_29);
        assertEquals(first, again);
        assertEquals(1, made.get());
        assertTrue(first.getFileName().toString().startsWith("2026-11-29-"), first.toString());
        assertEquals("recipe", Files.readString(first.resolve("a")));
        assertEquals("reciperecipe", Files.readString(first.resolve("b")));
    }

    @Test
    void threadsAskingAtOnceWaitForOneMaker() throws Exception {
        ExecutorService pool = Executors.newFixedThreadPool(6);
        try {
            CountDownLatch go = new CountDownLatch(1);
            List<Future<Path>> asked = new ArrayList<>();
            for (int i = 0; i < 6; i++) {
                asked.add(pool.submit(() -> {
                    go.await();
                    Path dir = SharedStores.in(root, "recipe", this::make, NOV_29);
                    assertEquals("reciperecipe", Files.readString(dir.resolve("b")), "a whole directory, never half");
                    return dir;
                }));
            }
            go.countDown();
            for (Future<Path> f : asked) {
                assertEquals(asked.get(0).get(), f.get());
            }
        } finally {
            pool.shutdownNow();
        }
        assertEquals(1, made.get());
    }

    @Test
    void aChangedRecipeOrANewDayGetsADirectoryOfItsOwn() throws Exception {
        Path today = SharedStores.in(root, "recipe", this::make, NOV_29);
        Path changed = SharedStores.in(root, "recipe, changed", this::make, NOV_29);
        Path tomorrow = SharedStores.in(root, "recipe", this::make, Clock.offset(NOV_29, java.time.Duration.ofDays(1)));
        assertNotEquals(today, changed);
        assertNotEquals(today, tomorrow);
        assertTrue(tomorrow.getFileName().toString().startsWith("2026-11-30-"), tomorrow.toString());
        assertEquals("recipe, changed", Files.readString(changed.resolve("a")));
        assertEquals(3, made.get());
        assertTrue(Files.isDirectory(today), "yesterday's may still be read by a JVM started yesterday");
    }

    @Test
    void aMakerThatFailsLeavesNothingInPlaceAndTheNextCallMakesItAfresh() throws Exception {
        IOException broken = new IOException("keytool failed");
        assertEquals(broken, assertThrows(IOException.class, () -> SharedStores.in(root, "recipe", (dir, recipe) -> {
            Files.writeString(dir.resolve("a"), "half");
            throw broken;
        }, NOV_29)));
        try (Stream<Path> entries = Files.list(root)) {
            assertFalse(entries.anyMatch(p -> p.getFileName().toString().startsWith("2026-11-29")),
                    "a half-made directory was put in place");
        }
        Path dir = SharedStores.in(root, "recipe", this::make, NOV_29);
        assertEquals("recipe", Files.readString(dir.resolve("a")));
        try (Stream<Path> entries = Files.list(root)) {
            assertFalse(entries.anyMatch(p -> p.getFileName().toString().startsWith("making-")),
                    "the failed maker's leftovers were kept");
        }
    }

    @Test
    void directoriesTwoDaysOldOrMoreAreDeletedWhenANewOneIsMade() throws Exception {
        Path old = Files.createDirectories(root.resolve("2026-11-27-0123456789abcdef"));
        Files.writeString(old.resolve("a"), "expired");
        Path yesterday = Files.createDirectories(root.resolve("2026-11-28-0123456789abcdef"));
        SharedStores.in(root, "recipe", this::make, NOV_29);
        assertFalse(Files.exists(old), "an expired day was kept");
        assertTrue(Files.isDirectory(yesterday));
    }
}
