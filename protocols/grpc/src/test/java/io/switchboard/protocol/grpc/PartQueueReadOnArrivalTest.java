package io.switchboard.protocol.grpc;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;

import io.switchboard.codec.message.WireFormatException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;

/**
 * {@link PartQueue#readOnArrival} without gRPC: what the adding thread (gRPC's event loop) does
 * with each part, and what the waiting thread sees.
 */
class PartQueueReadOnArrivalTest {
    private final AtomicInteger requested = new AtomicInteger();

    private PartQueue queue(long maxMessageBytes) {
        return new PartQueue(requested::addAndGet, Duration.ofSeconds(5),
                () -> new WireFormatException(WireFormatException.MALFORMED, "idle"), maxMessageBytes);
    }

    @Test
    void partsAreReadOnTheAddingThreadEachRequestingOneMore() {
        PartQueue q = queue(1 << 20);
        List<Integer> read = new ArrayList<>();
        q.readOnArrival(p -> read.add(p.length));
        q.add(new Part(new byte[3], 3));
        q.add(new Part(new byte[5], 5));
        assertEquals(List.of(3, 5), read, "read as they were added");
        assertEquals(2, requested.get(), "one more part requested per part read");
        q.end();
        assertNull(q.take(), "the waiting thread sees only the end");
    }

    @Test
    void aLimitRefusesOnArrivalAndLaterPartsAreDroppedUnread() {
        PartQueue q = queue(6);
        List<Integer> read = new ArrayList<>();
        q.readOnArrival(p -> read.add(p.length));
        q.add(new Part(new byte[4], 4));
        q.add(new Part(new byte[4], 4));   // 8 bytes: over the limit of 6
        q.add(new Part(new byte[1], 1));
        assertEquals(List.of(4), read);
        assertEquals(1, requested.get(), "nothing more requested once refused");
        WireFormatException e = assertThrows(WireFormatException.class, q::take);
        assertEquals(WireFormatException.SIZE_LIMIT, e.reason());
    }

    @Test
    void anErrorWhileReadingFailsTheMessageNotTheAddingThread() {
        PartQueue q = queue(1 << 20);
        q.readOnArrival(p -> {
            throw new OutOfMemoryError("Java heap space");
        });
        q.add(new Part(new byte[3], 3));   // returns: gRPC's event loop goes on
        q.add(new Part(new byte[3], 3));
        assertEquals(0, requested.get());
        IllegalStateException e = assertThrows(IllegalStateException.class, q::take);
        assertInstanceOf(OutOfMemoryError.class, e.getCause());
    }
}
