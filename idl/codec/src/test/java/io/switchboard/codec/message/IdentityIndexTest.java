package io.switchboard.codec.message;

import static org.junit.jupiter.api.Assertions.assertEquals;

import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;

/** The node table's index: numbers by identity, in order, through many resizes. */
class IdentityIndexTest {
    @Test
    void numbersObjectsByIdentityInTheOrderFirstAdded() {
        IdentityIndex index = new IdentityIndex();
        List<String> keys = new ArrayList<>();
        for (int i = 0; i < 100_000; i++) {
            keys.add(new String("node"));   // equal but distinct objects: each gets its own number
        }
        for (int i = 0; i < keys.size(); i++) {
            assertEquals(i, index.addIfAbsent(keys.get(i)));
        }
        for (int i = 0; i < keys.size(); i += 7) {
            assertEquals(-1 - i, index.addIfAbsent(keys.get(i)), "added again: the first number, as -1 - n");
            assertEquals(i, index.indexOf(keys.get(i)));
        }
        assertEquals(keys.size(), index.size());
        assertEquals(-1, index.indexOf(new String("node")));
        assertEquals(-1, new IdentityIndex().indexOf("absent"));
    }

    @Test
    void aClearedIndexForgetsEveryKeyAndNumbersAgainFromZero() {
        IdentityIndex index = new IdentityIndex();
        List<Object> first = new ArrayList<>();
        for (int i = 0; i < 10_000; i++) {
            first.add(new Object());
            index.addIfAbsent(first.get(i));
        }
        int capacity = index.capacity();
        index.clear();
        assertEquals(0, index.size());
        assertEquals(capacity, index.capacity(), "the table is kept for the next message");
        for (Object o : first) {
            assertEquals(-1, index.indexOf(o), "nothing of the previous message stays");
        }
        Object a = new Object();
        assertEquals(0, index.addIfAbsent(a));
        assertEquals(-1, index.addIfAbsent(a));
        assertEquals(1, index.addIfAbsent(first.get(5)));
    }
}
