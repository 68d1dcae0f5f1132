package io.switchboard.protocol.spi;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.concurrent.CompletableFuture;
import org.junit.jupiter.api.Test;

class RecentCallsTest {
    private static RecentCalls.Entry add(RecentCalls recent, String identity, String key, long at, long bytes) {
        return recent.add(identity, key, null, new CompletableFuture<>(), at, bytes);
    }

    @Test
    void anOutcomeCountsWhenItIsKnownAndEvictsTheSameIdentitysOldest() {
        RecentCalls recent = new RecentCalls(10_000, 1_000);
        add(recent, "a", "op/1", 0, 100);
        RecentCalls.Entry second = add(recent, "a", "op/2", 1, 100);
        add(recent, "b", "op/3", 2, 100);
        recent.grow(second, 850);   // a large answer: a's share is now 1,050 of 1,000
        assertNull(recent.get("op/1"), "a's oldest went");
        assertNotNull(recent.get("op/2"));
        assertNotNull(recent.get("op/3"), "b's call stayed");
        assertEquals(950, recent.bytes("a"));
        assertEquals(1_050, recent.bytes());
    }

    @Test
    void whenTheWholeIsFullTheLargestShareGivesUpItsOldest() {
        RecentCalls recent = new RecentCalls(1_000, 1_000);
        add(recent, "small", "op/s", 0, 100);
        for (int i = 0; i < 50; i++) {
            add(recent, "flood", "op/f" + i, 1 + i, 100);
        }
        assertNotNull(recent.get("op/s"));
        assertEquals(100, recent.bytes("small"));
        assertEquals(900, recent.bytes("flood"));
        assertEquals(1_000, recent.bytes());
        assertNotNull(recent.get("op/f49"));
        assertNull(recent.get("op/f40"));
    }

    @Test
    void aCallLargerThanAShareIsNotKept() {
        RecentCalls recent = new RecentCalls(1_000, 500);
        RecentCalls.Entry big = add(recent, "a", "op/big", 0, 600);
        assertTrue(big.gone);
        assertNull(recent.get("op/big"));
        assertEquals(0, recent.bytes());
        recent.grow(big, 10);   // its outcome arrives after it went: nothing to count
        assertEquals(0, recent.bytes());
    }

    @Test
    void expiredCallsGoOldestFirstWhicheverTheirIdentity() {
        RecentCalls recent = new RecentCalls(10_000, 10_000);
        add(recent, "a", "op/1", 0, 100);
        add(recent, "b", "op/2", 5, 100);
        add(recent, "a", "op/3", 10, 100);
        recent.dropExpired(15, 10);   // older than 10 at 15: the first only
        assertNull(recent.get("op/1"));
        assertEquals(2, recent.size());
        assertEquals(100, recent.bytes("a"));
        recent.dropExpired(100, 10);
        assertEquals(0, recent.size());
        assertEquals(0, recent.bytes());
    }

    @Test
    void aRemovedCallFreesItsShare() {
        RecentCalls recent = new RecentCalls(10_000, 10_000);
        add(recent, "a", "op/1", 0, 100);
        add(recent, "a", "op/2", 1, 100);
        assertTrue(recent.remove("op/2"));
        assertFalse(recent.remove("op/2"), "removed once");
        assertNull(recent.get("op/2"));
        assertEquals(100, recent.bytes("a"));
        assertTrue(recent.remove("op/1"));
        assertEquals(0, recent.bytes());
        recent.dropExpired(100, 10);   // nothing left to expire, and no share left behind
        assertEquals(0, recent.size());
    }

    @Test
    void boundsMustBePositive() {
        assertThrows(IllegalArgumentException.class, () -> new RecentCalls(0, 10));
        assertThrows(IllegalArgumentException.class, () -> new RecentCalls(10, -1));
    }
}
