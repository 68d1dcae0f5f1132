package io.switchboard.registry;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;

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
}
