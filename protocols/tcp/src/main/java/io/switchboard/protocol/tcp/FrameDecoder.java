package io.switchboard.protocol.tcp;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufAllocator;
import io.netty.buffer.Unpooled;
import io.netty.channel.ChannelHandlerContext;
import io.netty.handler.codec.ByteToMessageDecoder;
import io.netty.handler.codec.DecoderException;
import io.switchboard.codec.message.WireFormatException;
import io.switchboard.codec.proto.ProtoInput;
import java.util.List;

/**
 * Cuts a connection's bytes into {@link Frame}s, within limits checked on the header before any
 * buffer grows: a frame whose data is over {@code maxDataBytes} is not buffered; its meta is read
 * (so that the call it belongs to can be answered or failed by its correlation id) and its data
 * skipped as it arrives. Anything else that breaks the framing (not {@code PRPC}, a meta larger
 * than the body or than {@code maxMetaBytes}, a meta that does not parse) ends the connection with
 * a {@link FrameException}: the stream cannot be resynchronised.
 *
 * <p>With a minimum rate (a server's), a frame must arrive within {@code frameTimeout} plus its
 * size at {@code minBytesPerSecond}, counted from its first byte; a slower sender's connection is
 * closed ({@link #slowSenders}), so a sender that trickles bytes cannot hold a connection's buffer
 * for longer.
 */
final class FrameDecoder extends ByteToMessageDecoder {
    /** Frames of at least this many bytes are collected in a buffer of their own size ({@link #cumulate}). */
    static final int PRESIZED_FRAME_BYTES = 256 << 10;
    /**
     * Room beyond such a frame for the start of the next one, which its last read may bring: one
     * read's worth (Netty's adaptive reads take at most 64 KiB).
     */
    private static final int READ_SLACK_BYTES = 64 << 10;

    private final long maxDataBytes;
    private final int maxMetaBytes;
    private final long frameTimeoutNanos;
    private final long minBytesPerSecond;
    private final Runnable slowSenders;
    /** Data bytes of an oversized frame still to skip. */
    private long discarding;
    /** The body size the header of the frame under way announced; 0 before its header is in. */
    private long announced;
    /** When the first byte of the frame under way arrived (System.nanoTime), or 0 between frames. */
    private long frameStart;

    /** A decoder without a minimum rate (a client's: it waits for answers as long as their calls do). */
    FrameDecoder(long maxDataBytes, int maxMetaBytes) {
        this(maxDataBytes, maxMetaBytes, null, 0, null);
    }

    /**
     * A decoder that closes the connection of a sender slower than {@code frameTimeout} plus a
     * frame's size at {@code minBytesPerSecond}, telling {@code slowSenders} each time.
     */
    FrameDecoder(long maxDataBytes, int maxMetaBytes, java.time.Duration frameTimeout, long minBytesPerSecond,
                 Runnable slowSenders) {
        this.maxDataBytes = maxDataBytes;
        this.maxMetaBytes = maxMetaBytes;
        this.frameTimeoutNanos = frameTimeout == null ? 0 : frameTimeout.toNanos();
        this.minBytesPerSecond = minBytesPerSecond;
        this.slowSenders = slowSenders;
        setCumulator(this::cumulate);
    }

    /**
     * Collects a connection's bytes until a frame is in. A large frame's bytes go into one heap
     * buffer of the size its header announced, within the limits; anything else is merged as
     * Netty does. Growing a pooled direct buffer by doubling instead ends at a whole pool chunk
     * (4 MiB for a 3.2 MB frame) that is freed to the system when the frame is done and mapped
     * again for the next one, a page fault for every 4 KiB of it (docs/tcp-wire.md, "Large messages on
     * the server").
     */
    private ByteBuf cumulate(ByteBufAllocator alloc, ByteBuf cumulation, ByteBuf in) {
        int missing = missingBytes(cumulation);
        if (missing == 0 || cumulation.readableBytes() + (long) missing < PRESIZED_FRAME_BYTES
                || in.readableBytes() <= cumulation.writableBytes()) {
            return MERGE_CUMULATOR.cumulate(alloc, cumulation, in);   // small, or room enough: no growing
        }
        try {
            long size = (long) cumulation.readableBytes() + Math.max(missing, in.readableBytes()) + READ_SLACK_BYTES;
            ByteBuf frame = Unpooled.buffer((int) Math.min(size, Integer.MAX_VALUE - 8));
            frame.writeBytes(cumulation).writeBytes(in);
            return frame;
        } finally {
            cumulation.release();
            in.release();
        }
    }

    /**
     * The bytes still missing of the frame whose header starts {@code in}, if it is one this
     * decoder will buffer (within the limits); else 0. A reader sizes its buffer by it once, rather
     * than grow it by doubling, copying, as the frame comes in.
     */
    int missingBytes(ByteBuf in) {
        int r = in.readerIndex();
        if (in.readableBytes() < Frame.HEADER_BYTES || in.getInt(r) != Frame.MAGIC) {
            return 0;
        }
        long body = in.getUnsignedInt(r + 4);
        long meta = in.getUnsignedInt(r + 8);
        if (meta > maxMetaBytes || meta > body || body - meta > maxDataBytes) {
            return 0;
        }
        return (int) Math.max(0, Frame.HEADER_BYTES + body - in.readableBytes());
    }

    @Override
    public void channelRead(ChannelHandlerContext ctx, Object msg) throws Exception {
        super.channelRead(ctx, msg);
        if (frameTimeoutNanos == 0) {
            return;
        }
        boolean partial = discarding > 0 || (internalBuffer().isReadable());
        if (!partial) {
            frameStart = 0;
        } else if (frameStart == 0) {
            long start = System.nanoTime();
            frameStart = start;
            watch(ctx, start, frameTimeoutNanos);
        }
    }

    /** Checks after {@code delayNanos} whether the frame that began at {@code start} is in, or late. */
    private void watch(ChannelHandlerContext ctx, long start, long delayNanos) {
        ctx.executor().schedule(() -> {
            if (frameStart != start || !ctx.channel().isActive()) {
                return;   // that frame is in
            }
            long allowed = frameTimeoutNanos + (long) (announced * 1e9 / minBytesPerSecond);
            long left = start + allowed - System.nanoTime();
            if (left > 0) {
                watch(ctx, start, left);   // its header said it is large: it has longer
                return;
            }
            if (slowSenders != null) {
                slowSenders.run();
            }
            ctx.fireExceptionCaught(new FrameException("a frame of " + announced + " bytes did not arrive within "
                    + java.time.Duration.ofNanos(allowed).toMillis() + " ms (slower than " + minBytesPerSecond
                    + " bytes/s)"));
        }, delayNanos, java.util.concurrent.TimeUnit.NANOSECONDS);
    }

    /** The framing of a connection broke: its bytes cannot be read on. */
    static final class FrameException extends DecoderException {
        FrameException(String message) {
            super(message);
        }
    }

    @Override
    protected void decode(ChannelHandlerContext ctx, ByteBuf in, List<Object> out) {
        cut(in, out);
    }

    /**
     * Cuts at most one frame off {@code in} into {@code out}, or skips data of an oversized one; for
     * a reader that keeps its own buffer (a client's connection) as for this handler's pipeline.
     */
    void cut(ByteBuf in, List<Object> out) {
        if (discarding > 0) {
            int n = (int) Math.min(discarding, in.readableBytes());
            in.skipBytes(n);
            discarding -= n;
            if (discarding > 0) {
                return;
            }
            frameDone();
        }
        if (in.readableBytes() < Frame.HEADER_BYTES) {
            return;
        }
        int at = in.readerIndex();
        if (in.getInt(at) != Frame.MAGIC) {
            throw new FrameException("not a baidu_std frame: the first bytes are not PRPC");
        }
        long body = in.getUnsignedInt(at + 4);
        long metaBytes = in.getUnsignedInt(at + 8);
        if (metaBytes > body) {
            throw new FrameException("a meta of " + metaBytes + " bytes in a body of " + body);
        }
        if (metaBytes > maxMetaBytes) {
            throw new FrameException("a meta of " + metaBytes + " bytes is over the limit of " + maxMetaBytes);
        }
        announced = body;
        long dataBytes = body - metaBytes;
        boolean oversized = dataBytes > maxDataBytes;
        long needed = Frame.HEADER_BYTES + (oversized ? metaBytes : body);
        if (in.readableBytes() < needed) {
            return;
        }
        RpcMeta meta = meta(in, at + Frame.HEADER_BYTES, (int) metaBytes);
        in.skipBytes(Frame.HEADER_BYTES + (int) metaBytes);
        if (oversized) {
            discarding = dataBytes;
            int n = (int) Math.min(discarding, in.readableBytes());
            in.skipBytes(n);
            discarding -= n;
            if (discarding == 0) {
                frameDone();
            }
            out.add(new Frame(meta, null, dataBytes, Frame.HEADER_BYTES + body));
            return;
        }
        frameDone();
        out.add(new Frame(meta, in.readRetainedSlice((int) dataBytes), dataBytes, Frame.HEADER_BYTES + body));
    }

    /** The frame under way is all in: the next one's clock starts at its first byte. */
    private void frameDone() {
        announced = 0;
        frameStart = 0;
    }

    private RpcMeta meta(ByteBuf in, int at, int length) {
        byte[] bytes = new byte[length];
        in.getBytes(at, bytes);
        try {
            return RpcMeta.decode(new ProtoInput(bytes, 0, length, RpcMeta.limits(maxMetaBytes)));
        } catch (WireFormatException e) {
            throw new FrameException("a malformed RpcMeta: " + e.getMessage());
        }
    }
}
