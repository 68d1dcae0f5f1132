package io.switchboard.protocol.grpc;

import io.grpc.netty.shaded.io.netty.buffer.PooledByteBufAllocator;
import io.grpc.netty.shaded.io.netty.channel.WriteBufferWaterMark;
import io.switchboard.codec.proto.ProtoCodec;

/**
 * Netty settings that client and server share, chosen for streams of {@link ProtoCodec#PART_BYTES}
 * parts (docs/benchmarks/bulk.md has the measurements behind them). Each is set through
 * gRPC's public builders ({@code flowControlWindow}, {@code withOption}, {@code withChildOption},
 * {@code setOnReadyThreshold}); gRPC's HTTP/2 handler stays as gRPC configures it.
 */
final class NettyTuning {
    /**
     * When a connection's unwritten bytes make it unwritable, and writable again. Netty's HTTP/2
     * flow controller writes at most the channel's writable bytes in one pass: with Netty's default
     * of 64 KiB a 1 MiB part would leave in sixteen passes, each after the socket drained the last.
     */
    static final WriteBufferWaterMark WRITE_WATER_MARK = new WriteBufferWaterMark(512 << 10, 1 << 20);

    /**
     * HTTP/2 flow-control window, per stream and connection: eight parts. gRPC's default of 1 MiB
     * is less than one part and its frame prefix, so a sender stalled on every part until the
     * receiver's WINDOW_UPDATE came back. What a receiver buffers stays bounded by it (and by the
     * {@link PartQueue#WINDOW} parts requested ahead).
     */
    static final int FLOW_CONTROL_WINDOW = 8 * ProtoCodec.PART_BYTES;

    /**
     * Bytes a streaming sender may have queued in gRPC, not yet written to the socket, and still
     * be ready for the next part: two parts, so the next part is encoded while the previous one
     * goes out (gRPC's default of 32 KiB made the sender wait for each part to leave first).
     */
    static final int ON_READY_THRESHOLD = 2 * ProtoCodec.PART_BYTES;

    /**
     * The pooled allocator of gRPC's own configuration (direct buffers, its arena counts and
     * caches), with 16 MiB chunks instead of gRPC's 2 MiB. With a multi-MiB flow-control window a
     * 2 MiB chunk filled past a quarter and emptied again as parts passed, and Netty frees a chunk
     * that empties from that state: the next part allocated a new one, a
     * {@code ByteBuffer.allocateDirect} that zeroes its memory. A 16 MiB chunk stays in the pool
     * below a quarter full. Shared by every client channel and server of this JVM, as gRPC's
     * default allocator is.
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

    /**
     * The send and receive buffers of a connection over a Unix socket (capped by the kernel's
     * {@code net.core.wmem_max}). A Unix stream connection holds only what its sender's buffer does,
     * 208 KiB by default, where TCP on loopback grows its windows to megabytes; with the default,
     * large messages gained nothing from the socket (docs/benchmarks/bulk.md).
     */
    static final int UNIX_SOCKET_BUFFER_BYTES = 4 << 20;

    private NettyTuning() {
    }
}
