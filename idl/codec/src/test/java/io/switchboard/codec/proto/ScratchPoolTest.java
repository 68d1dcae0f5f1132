package io.switchboard.codec.proto;

import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertSame;

import org.junit.jupiter.api.Test;

/** Things kept between messages: each handed to one taker only, and only where it fits. */
class ScratchPoolTest {
    @Test
    void aThingIsHandedOutOnceAndOnlyToATakerItFits() {
        ScratchPool<byte[]> pool = new ScratchPool<>(2);
        byte[] small = new byte[10];
        byte[] large = new byte[100];
        pool.give(small);
        pool.give(large);
        assertSame(large, pool.take(b -> b.length >= 50), "the one that fits, not the first");
        assertNull(pool.take(b -> b.length >= 50), "handed out once");
        assertSame(small, pool.take());
        assertNull(pool.take());
    }

    @Test
    void aFullPoolKeepsWhatItHasAndATakenPlaceTakesTheNext() {
        ScratchPool<String> pool = new ScratchPool<>(1);
        pool.give("first");
        pool.give("second");
        assertSame("first", pool.take());
        pool.give("third");
        assertSame("third", pool.take());
    }
}
