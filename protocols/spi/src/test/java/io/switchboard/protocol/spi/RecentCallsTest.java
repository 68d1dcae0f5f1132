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
    void aFullMemoryOfManyCallersFindsTheLargestShareWithoutLookingAtEveryCaller() {
        int callers = 20_000;
        RecentCalls recent = new RecentCalls(callers * 100L, 1_000);
        for (int i = 0; i < callers; i++) {
            add(recent, "caller-" + i, "op/" + i, i, 100);
        }
        add(recent, "heavy", "op/h0", callers, 300);   // the largest share from now on: it gives up its calls
        long before = recent.comparisons();
        for (int i = 0; i < callers; i++) {   // each new caller's call evicts once: memory is full
            add(recent, "new-" + i, "op/n" + i, callers + 1 + i, 100);
        }
        long perCall = (recent.comparisons() - before) / callers;
        // ordered by size: a few walks down a tree of 20,000 (at most 29 levels); a scan would be 20,000
        assertTrue(perCall <= 200, "shares compared per call at 20,000 callers: " + perCall);
        assertEquals(callers * 100L, recent.bytes());
        assertEquals(0, recent.bytes("heavy"), "the largest share went first");
        assertNull(recent.get("op/0"), "then, among equal shares, the oldest caller's");
        assertNotNull(recent.get("op/n" + (callers - 1)));
        assertEquals(callers, recent.size());
    }

    @Test
    void sharesThatShrinkAndGrowKeepTheirPlaceByWhatTheyHoldNow() {
        RecentCalls recent = new RecentCalls(1_000, 1_000);
        RecentCalls.Entry a = add(recent, "a", "op/a1", 0, 100);
        add(recent, "b", "op/b1", 1, 200);
        add(recent, "b", "op/b2", 2, 200);
        recent.grow(a, 400);   // a: 500, b: 400
        assertTrue(recent.remove("op/b2"));   // b: 200
        add(recent, "c", "op/c1", 3, 200);   // 900 in all
        add(recent, "c", "op/c2", 4, 200);   // 1,100: the largest, a, gives up its only call
        assertNull(recent.get("op/a1"));
        assertEquals(0, recent.bytes("a"));
        assertEquals(600, recent.bytes());
        recent.dropExpired(100, 96);   // older than 96 at 100: b's and c's first
        assertEquals(200, recent.bytes());
        assertEquals(1, recent.identities(), "an identity with nothing left is forgotten");
        add(recent, "d", "op/d1", 5, 900);   // 1,100: d, now the largest, gives up its own call
        assertNull(recent.get("op/d1"));
        assertNotNull(recent.get("op/c2"));
    }

    @Test
    void manyCallersAreKeptInOrderAndFewWalkedAndEitherWayTheLargestShareGoesFirst() {
        RecentCalls recent = new RecentCalls(5_000, 5_000);
        RecentCalls.Entry grown = null;
        for (int i = 0; i < 40; i++) {
            RecentCalls.Entry e = add(recent, "id-" + i, "op/" + i, i, 100);
            if (i == 5) {
                grown = e;
            }
        }
        assertTrue(recent.keptInOrder(), "40 callers");
        recent.grow(grown, 500);   // id-5: 600
        for (int i = 10; i < 40; i++) {
            assertTrue(recent.remove("op/" + i));
        }
        assertFalse(recent.keptInOrder(), "10 callers: walked");
        add(recent, "x", "op/x", 50, 3_000);
        add(recent, "y", "op/y", 51, 600);   // 5,100: x, the largest, gives up its call
        assertNull(recent.get("op/x"));
        assertEquals(2_100, recent.bytes());
        for (int i = 0; i < 40; i++) {
            add(recent, "z-" + i, "op/z" + i, 60 + i, 60);
        }
        assertTrue(recent.keptInOrder(), "52 callers");
        add(recent, "w", "op/w", 100, 550);   // 5,050: id-5 and y hold 600 each; id-5, the older, gives up its call
        assertNull(recent.get("op/5"));
        assertNotNull(recent.get("op/y"));
        assertNotNull(recent.get("op/w"));
        assertEquals(4_450, recent.bytes());
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
