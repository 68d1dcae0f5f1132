package io.switchboard.protocol.grpc;

import io.grpc.ChannelCredentials;
import io.grpc.ServerCredentials;
import io.grpc.internal.ObjectPool;
import io.grpc.netty.shaded.io.grpc.netty.GrpcHttp2ConnectionHandler;
import io.grpc.netty.shaded.io.grpc.netty.InternalNettyChannelCredentials;
import io.grpc.netty.shaded.io.grpc.netty.InternalNettyServerCredentials;
import io.grpc.netty.shaded.io.grpc.netty.InternalProtocolNegotiator;
import io.grpc.netty.shaded.io.netty.buffer.ByteBufAllocator;
import io.grpc.netty.shaded.io.netty.buffer.PooledByteBufAllocator;
import io.grpc.netty.shaded.io.netty.channel.ChannelHandler;
import io.grpc.netty.shaded.io.netty.handler.codec.ByteToMessageDecoder;
import io.grpc.netty.shaded.io.netty.util.AsciiString;
import java.util.concurrent.Executor;
import io.switchboard.codec.proto.ProtoCodec;

/**
 * Netty settings that client and server share, chosen for streams of {@link ProtoCodec#PART_BYTES}
 * parts (docs/benchmarks/grpc-typed-wire.md has the measurements behind them).
 */
final class NettyTuning {
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
    static final ByteBufAllocator ALLOCATOR = new PooledByteBufAllocator(
            PooledByteBufAllocator.defaultPreferDirect(),
            PooledByteBufAllocator.defaultNumHeapArena(),
            PooledByteBufAllocator.defaultNumDirectArena(),
            PooledByteBufAllocator.defaultPageSize(),
            11, // 8 KiB pages << 11: 16 MiB chunks
            PooledByteBufAllocator.defaultSmallCacheSize(),
            PooledByteBufAllocator.defaultNormalCacheSize(),
            PooledByteBufAllocator.defaultUseCacheForAllThreads());

    /**
     * {@code credentials} (plain text or TLS, unchanged) with one change to each connection's
     * HTTP/2 handler: incoming bytes are cumulated as a composite of the socket reads instead of
     * being merged into one buffer. Netty's default (merging) copies every read that follows a
     * read ending inside a frame, and since the DATA frames already passed up are slices that
     * gRPC still holds, it cannot append in place: it allocates a new buffer and copies the tail
     * and the read into it. A streamed part of 1 MiB is 64 frames of 16 KiB over reads that rarely
     * end on a frame boundary, so nearly every received byte was copied once on the event loop
     * (and the new buffers churned the pool's chunks). The composite keeps the reads as they came;
     * a frame that spans two reads is a slice across both.
     */
    static ChannelCredentials channel(ChannelCredentials credentials) {
        InternalProtocolNegotiator.ClientFactory inner = InternalNettyChannelCredentials.toNegotiator(credentials);
        return InternalNettyChannelCredentials.create(new InternalProtocolNegotiator.ClientFactory() {
            @Override
            public InternalProtocolNegotiator.ProtocolNegotiator newNegotiator() {
                return new CompositeCumulation(inner.newNegotiator());
            }

            @Override
            public int getDefaultPort() {
                return inner.getDefaultPort();
            }
        });
    }

    /** {@link #channel}, for a server's connections. */
    static ServerCredentials server(ServerCredentials credentials) {
        InternalProtocolNegotiator.ServerFactory inner = InternalNettyServerCredentials.toNegotiator(credentials);
        return InternalNettyServerCredentials.create(new InternalProtocolNegotiator.ServerFactory() {
            @Override
            public InternalProtocolNegotiator.ProtocolNegotiator newNegotiator(ObjectPool<? extends Executor> executors) {
                return new CompositeCumulation(inner.newNegotiator(executors));
            }
        });
    }

    /** A negotiator (plain text or TLS) that sets the composite cumulator on gRPC's HTTP/2 handler. */
    private static final class CompositeCumulation implements InternalProtocolNegotiator.ProtocolNegotiator {
        private final InternalProtocolNegotiator.ProtocolNegotiator negotiator;

        CompositeCumulation(InternalProtocolNegotiator.ProtocolNegotiator negotiator) {
            this.negotiator = negotiator;
        }

        @Override
        public AsciiString scheme() {
            return negotiator.scheme();
        }

        @Override
        public ChannelHandler newHandler(GrpcHttp2ConnectionHandler grpcHandler) {
            grpcHandler.setCumulator(ByteToMessageDecoder.COMPOSITE_CUMULATOR);
            return negotiator.newHandler(grpcHandler);
        }

        @Override
        public void close() {
            negotiator.close();
        }
    }

    private NettyTuning() {
    }
}
