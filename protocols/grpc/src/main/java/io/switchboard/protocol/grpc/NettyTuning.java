package io.switchboard.protocol.grpc;

import io.grpc.ChannelCredentials;
import io.grpc.ServerCredentials;
import io.grpc.internal.ObjectPool;
import io.grpc.netty.shaded.io.grpc.netty.GrpcHttp2ConnectionHandler;
import io.grpc.netty.shaded.io.grpc.netty.InternalNettyChannelCredentials;
import io.grpc.netty.shaded.io.grpc.netty.InternalNettyServerCredentials;
import io.grpc.netty.shaded.io.grpc.netty.InternalProtocolNegotiator;
import io.grpc.netty.shaded.io.netty.buffer.PooledByteBufAllocator;
import io.grpc.netty.shaded.io.netty.channel.ChannelHandler;
import io.grpc.netty.shaded.io.netty.channel.WriteBufferWaterMark;
import io.grpc.netty.shaded.io.netty.handler.codec.ByteToMessageDecoder;
import io.grpc.netty.shaded.io.netty.handler.codec.http2.Http2ConnectionHandler;
import io.grpc.netty.shaded.io.netty.handler.codec.http2.Http2Settings;
import io.grpc.netty.shaded.io.netty.util.AsciiString;
import java.lang.reflect.Field;
import java.util.concurrent.Executor;
import io.switchboard.codec.proto.ProtoCodec;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Netty settings that client and server share, chosen for streams of {@link ProtoCodec#PART_BYTES}
 * parts (docs/benchmarks/grpc-typed-wire.md has the measurements behind them).
 */
final class NettyTuning {
    private static final Logger LOG = LoggerFactory.getLogger(NettyTuning.class);

    /**
     * The largest HTTP/2 frame each side accepts, announced in gRPC's first SETTINGS: a peer sends a
     * 1 MiB part in 4 DATA frames instead of HTTP/2's default 64 of 16 KiB. Each frame costs work on
     * both event loops (a frame header, flow-control accounting, a buffer slice, a write entry) and
     * on the reading thread (one buffer more to walk). A frame is still bounded by the flow-control
     * window, and so is what a peer can make a receiver hold.
     */
    static final int MAX_FRAME_BYTES = 256 << 10;

    /**
     * When a connection's unwritten bytes make it unwritable, and writable again. Netty's HTTP/2
     * flow controller writes at most the channel's writable bytes in one pass, so with Netty's
     * default of 64 KiB a frame could not grow past 64 KiB however large the peer allowed.
     */
    static final WriteBufferWaterMark WRITE_WATER_MARK = new WriteBufferWaterMark(512 << 10, 1 << 20);

    /** The field of Netty's HTTP/2 handler its first SETTINGS are built from; null where hidden or switched off. */
    private static final Field INITIAL_SETTINGS = LibraryInternals.NETTY_TUNING ? initialSettings() : null;
    /** Connections whose HTTP/2 handler was tuned, in this JVM (for the test that notices when none is). */
    private static final java.util.concurrent.atomic.LongAdder TUNED = new java.util.concurrent.atomic.LongAdder();

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
     * {@code credentials} (plain text or TLS, unchanged) with one change to each connection's
     * HTTP/2 handler: incoming bytes are cumulated as a composite of the socket reads instead of
     * being merged into one buffer. Netty's default (merging) copies every read that follows a
     * read ending inside a frame, and since the DATA frames already passed up are slices that
     * gRPC still holds, it cannot append in place: it allocates a new buffer and copies the tail
     * and the read into it. A streamed part of 1 MiB is 64 frames of 16 KiB over reads that rarely
     * end on a frame boundary, so nearly every received byte was copied once on the event loop
     * (and the new buffers churned the pool's chunks). The composite keeps the reads as they came;
     * a frame that spans two reads is a slice across both. The handler also announces
     * {@link #MAX_FRAME_BYTES} as its largest frame. Unchanged when
     * {@link LibraryInternals#NETTY_TUNING} is off.
     */
    static ChannelCredentials channel(ChannelCredentials credentials) {
        if (!LibraryInternals.NETTY_TUNING) {
            return credentials;
        }
        InternalProtocolNegotiator.ClientFactory inner = InternalNettyChannelCredentials.toNegotiator(credentials);
        return InternalNettyChannelCredentials.create(new InternalProtocolNegotiator.ClientFactory() {
            @Override
            public InternalProtocolNegotiator.ProtocolNegotiator newNegotiator() {
                return new TunedHandler(inner.newNegotiator());
            }

            @Override
            public int getDefaultPort() {
                return inner.getDefaultPort();
            }
        });
    }

    /** {@link #channel}, for a server's connections. */
    static ServerCredentials server(ServerCredentials credentials) {
        if (!LibraryInternals.NETTY_TUNING) {
            return credentials;
        }
        InternalProtocolNegotiator.ServerFactory inner = InternalNettyServerCredentials.toNegotiator(credentials);
        return InternalNettyServerCredentials.create(new InternalProtocolNegotiator.ServerFactory() {
            @Override
            public InternalProtocolNegotiator.ProtocolNegotiator newNegotiator(ObjectPool<? extends Executor> executors) {
                return new TunedHandler(inner.newNegotiator(executors));
            }
        });
    }

    /**
     * Raises the largest frame {@code handler} will announce in its first SETTINGS, which it sends
     * once it joins the channel's pipeline (after this). grpc-java offers no setting for it, and
     * Netty builds those SETTINGS from the handler's private field: where a Netty version hides it,
     * the connection keeps HTTP/2's 16 KiB frames, slower for bulk parts but correct
     * ({@code GrpcFrameSizeTest} notices).
     */
    static void announceMaxFrameSize(Http2ConnectionHandler handler, int bytes) {
        if (INITIAL_SETTINGS == null) {
            return;
        }
        try {
            ((Http2Settings) INITIAL_SETTINGS.get(handler)).maxFrameSize(bytes);
        } catch (IllegalAccessException | RuntimeException e) {
            LOG.warn("cannot announce HTTP/2 frames of {} bytes (Netty's handler changed; frames stay at 16 KiB): {}",
                    bytes, e.toString());
        }
    }

    private static Field initialSettings() {
        try {
            Field f = Http2ConnectionHandler.class.getDeclaredField("initialSettings");
            f.setAccessible(true);
            if (f.getType() != Http2Settings.class) {
                LOG.warn("HTTP/2 frames stay at 16 KiB: Netty's Http2ConnectionHandler.initialSettings is a {}, not"
                        + " Http2Settings; -Dswitchboard.grpc.nettyTuning=false silences this", f.getType().getName());
                return null;
            }
            return f;
        } catch (ReflectiveOperationException | RuntimeException e) {
            LOG.warn("HTTP/2 frames stay at 16 KiB: Netty's Http2ConnectionHandler has no initialSettings field to"
                    + " raise the largest frame in ({}); -Dswitchboard.grpc.nettyTuning=false silences this", e.toString());
            return null;
        }
    }

    /**
     * A negotiator (plain text or TLS) that tunes gRPC's HTTP/2 handler before it starts: the
     * composite cumulator and {@link #MAX_FRAME_BYTES} frames.
     */
    private static final class TunedHandler implements InternalProtocolNegotiator.ProtocolNegotiator {
        private final InternalProtocolNegotiator.ProtocolNegotiator negotiator;

        TunedHandler(InternalProtocolNegotiator.ProtocolNegotiator negotiator) {
            this.negotiator = negotiator;
        }

        @Override
        public AsciiString scheme() {
            return negotiator.scheme();
        }

        @Override
        public ChannelHandler newHandler(GrpcHttp2ConnectionHandler grpcHandler) {
            TUNED.increment();
            grpcHandler.setCumulator(ByteToMessageDecoder.COMPOSITE_CUMULATOR);
            announceMaxFrameSize(grpcHandler, MAX_FRAME_BYTES);
            return negotiator.newHandler(grpcHandler);
        }

        @Override
        public void close() {
            negotiator.close();
        }
    }

    /** Connections whose HTTP/2 handler was tuned in this JVM so far, for tests. */
    static long tunedInAll() {
        return TUNED.sum();
    }

    /** Whether Netty's first SETTINGS can be reached to raise the largest frame, for tests. */
    static boolean canAnnounceFrameSize() {
        return INITIAL_SETTINGS != null;
    }

    private NettyTuning() {
    }
}
