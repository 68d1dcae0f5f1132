package io.switchboard.protocol;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.HashSet;
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
