package io.switchboard.registry;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

class SizedLruTest {
    @Test
    void theLeastRecentlyUsedGoWhileTheValuesHoldMoreThanTheBound() {
        SizedLru<String, byte[]> kept = new SizedLru<>(100, a -> a.length);
        kept.put("a", new byte[40]);
        kept.put("b", new byte[40]);
        assertNotNull(kept.get("a"));   // now b is the least recently used
        kept.put("c", new byte[40]);
        assertNull(kept.get("b"));
        assertNotNull(kept.get("a"));
        assertNotNull(kept.get("c"));
        assertEquals(80, kept.bytes());

        kept.put("a", new byte[10]);   // replaced: its old bytes no longer count
        assertEquals(50, kept.bytes());
        kept.put("d", new byte[500]);   // larger than the bound alone: nothing is kept
        assertEquals(0, kept.bytes());
        assertNull(kept.get("a"));
        assertNull(kept.get("d"));
    }

    @Test
    void atTheBoundOfEntriesTheLeastRecentlyPutGoes() {
        SizedLru<String, String> kept = SizedLru.ofEntries(3);
        kept.put("a", "1");
        kept.put("b", "2");
        kept.put("c", "3");
        assertEquals(3, kept.size(), "the bound itself is kept");
        kept.put("a", "1'");   // put again: the most recently used now, and nothing goes
        assertEquals(3, kept.size());
        kept.put("d", "4");
        assertFalse(kept.containsKey("b"), "b was used least recently");
        assertEquals("1'", kept.get("a"));
        assertEquals("3", kept.get("c"));
        assertEquals("4", kept.get("d"));
        assertEquals(3, kept.size());
        assertEquals(3, kept.bytes());
    }

    @Test
    void aGetMakesAnEntryTheMostRecentlyUsedAndContainsKeyDoesNot() {
        SizedLru<String, String> kept = SizedLru.ofEntries(2);
        kept.put("a", "1");
        kept.put("b", "2");
        assertEquals("1", kept.get("a"));
        kept.put("c", "3");
        assertNull(kept.get("b"));
        assertEquals("1", kept.get("a"));

        assertTrue(kept.containsKey("c"));   // c stays the least recently used
        kept.put("d", "4");
        assertFalse(kept.containsKey("c"));
        assertEquals("1", kept.get("a"));
        assertEquals("4", kept.get("d"));
    }

    @Test
    void aBoundOfOneKeepsTheLastPut() {
        SizedLru<String, String> kept = SizedLru.ofEntries(1);
        kept.put("a", "1");
        assertEquals("1", kept.get("a"));
        kept.put("b", "2");
        assertNull(kept.get("a"));
        assertEquals("2", kept.get("b"));
        assertEquals(1, kept.size());
        kept.put("b", "2'");
        assertEquals("2'", kept.get("b"));
        assertEquals(1, kept.size());
    }

    /**
     * Each thread gets a hot key before each put of a key of its own. Between the last get of the
     * hot key and any put, every other thread can have put at most once (its own next put comes
     * after a get of the hot key), so with a bound of one more than the threads the hot key never
     * goes: every get of it answers, if each call is atomic and recency counts across threads.
     */
    @Test
    void severalThreadsStayWithinTheBoundAndKeepWhatTheyAllUse() throws Exception {
        int threads = 8;
        int putsEach = 20_000;
        int bound = threads + 1;
        SizedLru<String, String> kept = SizedLru.ofEntries(bound);
        kept.put("hot", "hot");
        CountDownLatch start = new CountDownLatch(1);
        ExecutorService pool = Executors.newFixedThreadPool(threads);
        try {
            List<Future<String>> done = new ArrayList<>();
            for (int t = 0; t < threads; t++) {
                String thread = "t" + t + "-";
                done.add(pool.submit(() -> {
                    start.await();
                    for (int i = 0; i < putsEach; i++) {
                        if (!"hot".equals(kept.get("hot"))) {
                            return "the hot key went before put " + i + " of " + thread;
                        }
                        String key = thread + i;
                        kept.put(key, key);
                        String back = kept.get(key);
                        if (back != null && !back.equals(key)) {
                            return key + " answered " + back;
                        }
                        if (kept.size() > bound) {
                            return "over the bound: " + kept.size();
                        }
                    }
                    return null;
                }));
            }
            start.countDown();
            for (Future<String> f : done) {
                assertNull(f.get(60, TimeUnit.SECONDS));
            }
        } finally {
            pool.shutdownNow();
        }
        assertEquals(bound, kept.size());
        assertEquals(bound, kept.bytes(), "what is counted as held matches what is kept");
        assertEquals("hot", kept.get("hot"));
    }
}
