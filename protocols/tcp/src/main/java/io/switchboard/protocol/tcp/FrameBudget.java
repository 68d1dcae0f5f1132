package io.switchboard.protocol.tcp;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.UnpooledByteBufAllocator;
import io.netty.buffer.UnpooledHeapByteBuf;
import java.util.concurrent.atomic.AtomicLong;

/**
 * The bytes a tcp server may hold at once in large frames' buffers, shared by all its connections.
 * A frame of at least {@link FrameDecoder#PRESIZED_FRAME_BYTES} reserves its size when its header
 * is read; one that cannot is answered {@code EOVERCROWDED} and its data skipped, so a thousand
 * connections each announcing a 4 MB frame hold at most the budget, never 4 GB. A reservation is
 * given back when the frame's buffer is freed (its call has read it), or when the frame ends
 * without one.
 */
final class FrameBudget {
    private final long bytes;
    private final FrameArrays arrays;
    private final AtomicLong reserved = new AtomicLong();

    FrameBudget(long bytes) {
        this(bytes, FrameArrays.SHARED);
    }

    /** A budget whose buffers' arrays come from {@code arrays}. */
    FrameBudget(long bytes, FrameArrays arrays) {
        this.arrays = arrays;
        if (bytes <= 0) {
            throw new IllegalArgumentException("a frame budget must be positive: " + bytes);
        }
        this.bytes = bytes;
    }

    /** Reserves {@code n} bytes; false, reserving nothing, if that would go past the budget. */
    boolean reserve(long n) {
        while (true) {
            long now = reserved.get();
            if (now + n > bytes) {
                return false;
            }
            if (reserved.compareAndSet(now, now + n)) {
                return true;
            }
        }
    }

    void release(long n) {
        reserved.addAndGet(-n);
    }

    /** Bytes reserved now; for tests and logs. */
    long reserved() {
        return reserved.get();
    }

    long bytes() {
        return bytes;
    }

    /**
     * A heap buffer of at least {@code capacity} bytes that gives {@code n} reserved bytes back when
     * it is freed (when the last slice of it is released). Its array is a kept one
     * ({@link FrameArrays#take}) if the budget has room for what it holds beyond {@code capacity},
     * else a new one: the budget counts every byte the buffer holds.
     */
    ByteBuf buffer(int capacity, long n) {
        byte[] array = arrays.take(capacity);
        long extra = array.length - (long) capacity;
        if (extra > 0 && !reserve(extra)) {
            arrays.give(array);
            array = new byte[capacity];
            extra = 0;
        }
        long held = n + extra;
        return new UnpooledHeapByteBuf(UnpooledByteBufAllocator.DEFAULT, array, array.length) {
            @Override
            protected void freeArray(byte[] freed) {
                arrays.give(freed);
            }

            @Override
            protected void deallocate() {
                super.deallocate();
                FrameBudget.this.release(held);
            }
        }.clear();   // Netty's constructor makes the whole array readable
    }
}
