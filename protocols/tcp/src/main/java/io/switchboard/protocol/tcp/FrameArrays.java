package io.switchboard.protocol.tcp;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.PooledByteBufAllocator;
import io.netty.buffer.UnpooledByteBufAllocator;
import io.netty.buffer.UnpooledHeapByteBuf;
import io.switchboard.codec.proto.ScratchPool;

/**
 * Memory for large frames, kept between them. A new array of a few megabytes is zeroed by the JVM
 * before anyone writes it, and a pooled direct buffer that fills a Netty chunk takes a new chunk,
 * zeroed and mapped page by page, once it is freed: zeroing took 12-15% of a 4 MB call's CPU
 * (docs/benchmarks/bulk.md, "tcp's large frames"). So a large frame's array ({@link #take},
 * {@link #give}, {@link #heapBuffer}) comes from a few kept softly ({@link #SHARED}, one per JVM,
 * in a {@link ScratchPool}), and the server's answers are written into {@link #ALLOCATOR}'s larger
 * chunks.
 *
 * <p>An array taken holds another frame's bytes past what its taker writes: takers read only what
 * they wrote (a frame's own length), as every reader of a frame does.
 */
final class FrameArrays {
    /** Arrays this large or larger are kept; smaller ones cost little to make. */
    static final int MIN_KEPT_BYTES = 256 << 10;
    /** A kept array is handed out for a frame it is at most this much larger than (a quarter). */
    private static final int SLACK_SHIFT = 2;

    /**
     * Netty's pooled allocator with 16 MiB chunks instead of its 4 MiB: an answer of 4 MB filled a
     * 4 MiB chunk, and Netty frees a chunk that empties from that state, so the next answer took a
     * new one. A 16 MiB chunk stays in the pool below a quarter full (gRPC's channels have the same,
     * for the same reason). For the server's connections.
     */
    static final PooledByteBufAllocator ALLOCATOR = new PooledByteBufAllocator(
            PooledByteBufAllocator.defaultPreferDirect(),
            PooledByteBufAllocator.defaultNumHeapArena(),
            PooledByteBufAllocator.defaultNumDirectArena(),
            PooledByteBufAllocator.defaultPageSize(),
            11, // 8 KiB pages << 11: 16 MiB chunks
            PooledByteBufAllocator.defaultSmallCacheSize(),
            PooledByteBufAllocator.defaultNormalCacheSize(),
            PooledByteBufAllocator.defaultUseCacheForAllThreads());

    /** The JVM's kept arrays: every tcp client and server of it takes from and gives to them. */
    static final FrameArrays SHARED = new FrameArrays(4);

    private final ScratchPool<byte[]> kept;

    /** Keeps up to {@code places} arrays. */
    FrameArrays(int places) {
        kept = new ScratchPool<>(places);
    }

    /**
     * An array of at least {@code length} bytes: a kept one if one fits (at most a quarter larger),
     * else a new one of exactly {@code length}.
     */
    byte[] take(int length) {
        if (length >= MIN_KEPT_BYTES) {
            long most = length + ((long) length >> SLACK_SHIFT);
            byte[] a = kept.take(b -> b.length >= length && b.length <= most);
            if (a != null) {
                return a;
            }
        }
        return new byte[length];
    }

    /** Keeps {@code array} for a later frame, if it is large enough to be worth it and a place is free. */
    void give(byte[] array) {
        if (array.length >= MIN_KEPT_BYTES) {
            kept.give(array);
        }
    }

    /**
     * An empty heap buffer over {@code array} (from {@link #take}) that gives its arrays back when
     * it is freed, or when it grows into a larger one; it grows at most to {@code maxCapacity} (at
     * least the array's length).
     */
    ByteBuf heapBuffer(byte[] array, int maxCapacity) {
        return new KeptArrayBuffer(array, maxCapacity).clear();   // Netty's constructor makes the whole array readable
    }

    private final class KeptArrayBuffer extends UnpooledHeapByteBuf {
        KeptArrayBuffer(byte[] array, int maxCapacity) {
            super(UnpooledByteBufAllocator.DEFAULT, array, maxCapacity);
        }

        @Override
        protected byte[] allocateArray(int initialCapacity) {
            return take(initialCapacity);
        }

        /**
         * Gives an array back when the buffer is freed, or when it grows or shrinks into a new one
         * while no derived buffer holds it. With one alive (a frame's data, a retained slice), the old
         * array may still be read through a {@code ByteBuffer} taken before the buffer moved on, and a
         * frame written into it meanwhile would become another call's answer; it is left to the
         * collector (Netty's merging cumulator does not grow a shared buffer in place, for the same reason).
         */
        @Override
        protected void freeArray(byte[] array) {
            if (refCnt() <= 1) {   // 0: freed; 1: growing, and nothing else holds the buffer
                give(array);
            }
        }
    }
}
