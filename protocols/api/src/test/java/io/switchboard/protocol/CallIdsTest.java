package io.switchboard.protocol;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import java.util.UUID;
import org.junit.jupiter.api.Test;

class CallIdsTest {
    @Test
    void aNewIdIs128BitsInHexAndNeverRepeats() {
        Set<String> seen = new HashSet<>();
        int[] ones = new int[128];
        for (int i = 0; i < 10_000; i++) {
            String id = CallIds.next();
            assertTrue(id.matches("[0-9a-f]{32}"), id);
            assertTrue(seen.add(id), "an id came twice: " + id);
            for (int bit = 0; bit < 128; bit++) {
                ones[bit] += (Character.digit(id.charAt(bit / 4), 16) >> (3 - bit % 4)) & 1;
            }
            assertTrue(CallIds.wellFormed(id));
        }
        // every bit varies, the leading one too (the ids of old were forced to start with 8-f)
        for (int bit = 0; bit < 128; bit++) {
            assertTrue(ones[bit] > 4_000 && ones[bit] < 6_000, "bit " + bit + " set " + ones[bit] + " times in 10,000");
        }
    }

    @Test
    void idsMadeOnManyThreadsAtOnceNeverRepeat() throws Exception {
        int threads = 8;
        int each = 3 * CallIds.IDS_PER_READ + 7;   // across several reads of each thread's batch
        java.util.concurrent.ExecutorService pool = java.util.concurrent.Executors.newFixedThreadPool(threads);
        try {
            java.util.concurrent.CountDownLatch start = new java.util.concurrent.CountDownLatch(1);
            List<java.util.concurrent.Future<List<String>>> made = new ArrayList<>();
            for (int t = 0; t < threads; t++) {
                made.add(pool.submit(() -> {
                    start.await();
                    List<String> ids = new ArrayList<>();
                    for (int i = 0; i < each; i++) {
                        ids.add(CallIds.next());
                    }
                    return ids;
                }));
            }
            start.countDown();
            Set<String> seen = new HashSet<>();
            for (java.util.concurrent.Future<List<String>> f : made) {
                for (String id : f.get()) {
                    assertTrue(id.matches("[0-9a-f]{32}"), id);
                    assertTrue(seen.add(id), "an id came twice: " + id);
                }
            }
            assertEquals(threads * each, seen.size());
        } finally {
            pool.shutdownNow();
        }
    }

    @Test
    void optionsWithANewCallIdGetAFreshWellFormedIdEachTimeAndKeepTheRest() {
        CallOptions base = CallOptions.DEFAULT.withTimeout(java.time.Duration.ofSeconds(3));
        CallOptions a = base.withNewCallId();
        CallOptions b = base.withNewCallId();
        assertTrue(CallIds.wellFormed(a.callId()), a.callId());
        assertTrue(!a.callId().equals(b.callId()), "two new ids: " + a.callId());
        assertEquals(base.timeout(), a.timeout());
        assertEquals(null, base.callId(), "the options it came from are unchanged");
    }

    @Test
    void theFormsClientsSendAreWellFormed() {
        assertTrue(CallIds.wellFormed("0123456789abcdef0123456789abcdef"));   // Java and Python clients
        assertTrue(CallIds.wellFormed(UUID.randomUUID().toString()));         // older SOAP cancels
        assertTrue(CallIds.wellFormed("q83vEjRWeJASNFZ4kBI0Vg=="));           // base64 of 16 bytes
        assertTrue(CallIds.wellFormed("q83vEjRWeJASNFZ4kBI0Vg"));             // base64url
        assertTrue(CallIds.wellFormed("order-42"));                            // chosen by a caller
        assertTrue(CallIds.wellFormed("x".repeat(CallIds.MAX_LENGTH)));
    }

    @Test
    void anythingElseIsMalformed() {
        assertFalse(CallIds.wellFormed(null));
        assertFalse(CallIds.wellFormed(""));
        assertFalse(CallIds.wellFormed("x".repeat(CallIds.MAX_LENGTH + 1)));
        assertFalse(CallIds.wellFormed("id with spaces"));
        assertFalse(CallIds.wellFormed("<script>"));
        assertFalse(CallIds.wellFormed("line\nbreak"));
        assertFalse(CallIds.wellFormed("caf\u00e9"));
        assertFalse(CallIds.wellFormed("a\u0000b"));
    }

    @Test
    void callOptionsTakeOnlyWellFormedIds() {
        assertEquals("order-42", CallOptions.DEFAULT.withCallId("order-42").callId());
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
                () -> CallOptions.DEFAULT.withCallId("two words"));
        assertEquals(CallIds.rule(), e.getMessage());
    }
}
