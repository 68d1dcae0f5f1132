package io.switchboard.protocol.grpc;

import io.grpc.netty.shaded.io.netty.channel.Channel;
import io.grpc.netty.shaded.io.netty.channel.ChannelHandlerContext;
import io.grpc.netty.shaded.io.netty.channel.ChannelInboundHandlerAdapter;
import io.grpc.netty.shaded.io.netty.handler.codec.http2.Http2CodecUtil;
import io.grpc.netty.shaded.io.netty.handler.codec.http2.Http2ConnectionHandler;
import io.grpc.netty.shaded.io.netty.handler.codec.http2.Http2Settings;

/**
 * Tunes gRPC's HTTP/2 handler on one connection for large messages, through Netty's public API
 * once the handler is in the pipeline: it advertises larger DATA frames ({@link #frameBytes}, in a
 * SETTINGS frame the peer acknowledges before it sends one) and cumulates large socket reads
 * without copying them ({@link ComposingCumulator}). Installed at the head of a new connection's
 * pipeline, before gRPC adds its own handlers; it looks for gRPC's handler at each read until it
 * finds it, then leaves the pipeline.
 *
 * <p>gRPC's builders have no setting for either: gRPC keeps HTTP/2's 16 KiB frames, so a
 * {@code double[10^7]} message crosses as some 5,000 frames each way, and Netty's default
 * cumulator copies every read that lands behind the rest of a frame (with 16 KiB frames, nearly
 * all of them) once more (docs/benchmarks/bulk.md).
 *
 * <pre>{@code
 * channel.pipeline().addFirst(Http2Tuner.NAME, new Http2Tuner());   // a new, not yet registered channel
 * }</pre>
 */
final class Http2Tuner extends ChannelInboundHandlerAdapter {
    /** The handler's name in the pipeline. */
    static final String NAME = "switchboard-http2-tuner";

    /**
     * The DATA frame size this side accepts and asks its peer to send: 256 KiB, a quarter of a
     * part. {@code -Dswitchboard.grpc.frameBytes=16384} keeps HTTP/2's default (to measure against).
     */
    static final int FRAME_BYTES = Math.max(Http2CodecUtil.MAX_FRAME_SIZE_LOWER_BOUND,
            Math.min(Http2CodecUtil.MAX_FRAME_SIZE_UPPER_BOUND, Integer.getInteger("switchboard.grpc.frameBytes", 256 << 10)));

    /** Whether large reads are composed rather than copied ({@code -Dswitchboard.grpc.composeReads=false}: Netty's default). */
    static final boolean COMPOSE_READS = !"false".equals(System.getProperty("switchboard.grpc.composeReads"));

    /** Reads after which the tuner stops looking: gRPC's handler is in place before the first. */
    private static final int MAX_READS_LOOKING = 8;

    private final int frameBytes;
    private final boolean composeReads;
    private int reads;

    Http2Tuner() {
        this(FRAME_BYTES, COMPOSE_READS);
    }

    Http2Tuner(int frameBytes, boolean composeReads) {
        this.frameBytes = frameBytes;
        this.composeReads = composeReads;
    }

    /** Installs a tuner on {@code channel}, a connection gRPC has not yet set up. */
    static void install(Channel channel) {
        if (FRAME_BYTES != Http2CodecUtil.DEFAULT_MAX_FRAME_SIZE || COMPOSE_READS) {
            channel.pipeline().addFirst(NAME, new Http2Tuner());
        }
    }

    /** The DATA frame size this tuner advertises. */
    int frameBytes() {
        return frameBytes;
    }

    @Override
    public void channelRead(ChannelHandlerContext ctx, Object msg) {
        Http2ConnectionHandler grpc = ctx.pipeline().get(Http2ConnectionHandler.class);
        if (grpc != null) {
            tune(grpc, ctx.pipeline().context(grpc));
            ctx.pipeline().remove(this);
        } else if (++reads >= MAX_READS_LOOKING) {
            ctx.pipeline().remove(this);
        }
        ctx.fireChannelRead(msg);
    }

    private void tune(Http2ConnectionHandler grpc, ChannelHandlerContext grpcContext) {
        if (composeReads) {
            grpc.setCumulator(new ComposingCumulator());
        }
        if (frameBytes != Http2CodecUtil.DEFAULT_MAX_FRAME_SIZE) {
            // the encoder queues the settings and applies them to this side's frame reader when the
            // peer acknowledges them: the peer acknowledges before it sends a larger frame
            grpc.encoder().writeSettings(grpcContext, new Http2Settings().maxFrameSize(frameBytes), grpcContext.newPromise());
            grpcContext.flush();
        }
    }
}
