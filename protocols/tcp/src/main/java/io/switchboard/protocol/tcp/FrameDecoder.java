package io.switchboard.protocol.tcp;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufAllocator;
import io.netty.buffer.Unpooled;
import io.netty.channel.ChannelHandlerContext;
import io.netty.handler.codec.ByteToMessageDecoder;
import io.netty.handler.codec.DecoderException;
import io.switchboard.codec.message.MessageLimits;
import io.switchboard.codec.message.WireFormatException;
import io.switchboard.codec.proto.ProtoInput;
import java.util.ArrayList;
import java.util.List;

/**
 * Cuts a connection's bytes into {@link Frame}s, within limits checked on the header before any
 * buffer grows: a frame whose data is over {@code maxDataBytes} is not buffered; its meta is read
 * (so that the call it belongs to can be answered or failed by its correlation id) and its data
 * skipped as it arrives (a client's), or nothing after it is read at all (a server's, which
 * answers {@code ELIMIT} and closes the connection). Anything else that breaks the framing (not
 * {@code PRPC}, a meta larger than the body or than {@code maxMetaBytes}, a meta that does not
 * parse) ends the connection with a {@link FrameException}: the stream cannot be resynchronised.
 *
 * <p>A server's decoder also holds each frame to a deadline: the whole frame must arrive within
 * {@code frameTimeout} of its first byte, whatever size its header announces, or the connection is
 * closed ({@link #slowSenders}); and a large frame's buffer is reserved from the server's
 * {@link FrameBudget} when its header is read: one that finds the budget spent is passed on
 * without data ({@link Frame#overBudget}) and its data skipped, so connections that announce large
 * frames and send nothing more hold at most the budget.
 *
 * <p>Not a handler of its own: a server's connection feeds it each read ({@link #read}), so a call
 * passes one handler of the pipeline, not two; a client's connection cuts frames off its own buffer
 * ({@link #cut}).
 */
final class FrameDecoder {
    /** Takes the frames a read brings in, in order. */
    interface Sink {
        void frame(ChannelHandlerContext ctx, Frame frame);
    }

    /** Frames of at least this many bytes are collected in a buffer of their own size ({@link #cumulate}). */
    static final int PRESIZED_FRAME_BYTES = 256 << 10;
    /**
     * Room beyond such a frame for the start of the next one, which its last read may bring: one
     * read's worth (Netty's adaptive reads take at most 64 KiB).
     */
    private static final int READ_SLACK_BYTES = 64 << 10;

    private final long maxDataBytes;
    private final int maxMetaBytes;
    private final MessageLimits metaLimits;
    /** The names of the last request's service and method: the next request most likely names them again. */
    private String lastService;
    private String lastMethod;
    private final long frameTimeoutNanos;
    private final Runnable slowSenders;
    /** A server's: large frames' buffers come from it; null for a client's. */
    private final FrameBudget budget;
    /** Bytes of the budget held for the frame under way and not yet handed to its buffer. */
    private long reservedForFrame;
    /** A server's decoder stops at an oversized frame: the connection is closed after its answer. */
    private boolean closing;
    /** Data bytes of an oversized frame still to skip. */
    private long discarding;
    /** The body size the header of the frame under way announced; 0 before its header is in. */
    private long announced;
    /**
     * When the first byte of the frame under way arrived (System.nanoTime), or 0 between frames;
     * read by the server's connection limit from other threads.
     */
    private volatile long frameStart;
    /** Bytes read and not yet cut into frames (a frame's start), or null. */
    private ByteBuf cumulation;
    /** What one {@link #cut} gives; reused. */
    private final List<Object> cut = new ArrayList<>(2);

    /** A client's decoder: no deadline (it waits for answers as long as their calls do), no budget. */
    FrameDecoder(long maxDataBytes, int maxMetaBytes) {
        this(maxDataBytes, maxMetaBytes, null, null, null);
    }

    /**
     * A server's decoder: it closes the connection of a sender whose frame takes longer than
     * {@code frameTimeout} to arrive, telling {@code slowSenders}; takes large frames' buffers from
     * {@code budget}; and reads nothing after an oversized frame's meta.
     */
    FrameDecoder(long maxDataBytes, int maxMetaBytes, java.time.Duration frameTimeout, FrameBudget budget,
                 Runnable slowSenders) {
        this.maxDataBytes = maxDataBytes;
        this.maxMetaBytes = maxMetaBytes;
        this.metaLimits = RpcMeta.limits(maxMetaBytes);
        this.frameTimeoutNanos = frameTimeout == null ? 0 : frameTimeout.toNanos();
        this.budget = budget;
        this.slowSenders = slowSenders;
    }

    /** When the frame under way began (System.nanoTime), or 0 if none is under way. */
    long frameStartNanos() {
        return frameStart;
    }

    /**
     * Collects a connection's bytes until a frame is in. A large frame's bytes go into one heap
     * buffer of at least the size its header announced (over a kept array, {@link FrameArrays}),
     * within the limits; anything else is merged as
     * Netty does. Growing a pooled direct buffer by doubling instead ends at a whole pool chunk
     * (4 MiB for a 3.2 MB frame) that is freed to the system when the frame is done and mapped
     * again for the next one, a page fault for every 4 KiB of it (docs/tcp-wire.md, "Large messages on
     * the server").
     */
    private ByteBuf cumulate(ByteBufAllocator alloc, ByteBuf cumulation, ByteBuf in) {
        int missing = missingBytes(cumulation);
        if (missing == 0 || cumulation.readableBytes() + (long) missing < PRESIZED_FRAME_BYTES
                || in.readableBytes() <= cumulation.writableBytes()) {
            return ByteToMessageDecoder.MERGE_CUMULATOR.cumulate(alloc, cumulation, in);   // small, or room enough: no growing
        }
        try {
            long size = (long) cumulation.readableBytes() + Math.max(missing, in.readableBytes()) + READ_SLACK_BYTES;
            int capacity = (int) Math.min(size, Integer.MAX_VALUE - 8);
            ByteBuf frame;
            if (budget == null) {
                frame = Unpooled.buffer(capacity);
            } else {
                frame = budget.buffer(capacity, reservedForFrame);   // the buffer gives it back when freed
                reservedForFrame = 0;
            }
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
        if (budget != null && reservedForFrame == 0) {
            return 0;   // no buffer of its own without its bytes from the budget (reserved as its header is cut)
        }
        return (int) Math.max(0, Frame.HEADER_BYTES + body - in.readableBytes());
    }

    /**
     * Takes one read's bytes: hands each whole frame to {@code sink}, in order, keeps the start of
     * the next for the reads to come, and starts or stops the frame's clock.
     *
     * @throws FrameException when the framing is broken: the connection cannot go on
     */
    void read(ChannelHandlerContext ctx, Object msg, Sink sink) {
        if (!(msg instanceof ByteBuf in)) {
            ctx.fireChannelRead(msg);
            return;
        }
        ByteBuf held = cumulation;
        cumulation = null;   // handed to cumulate, which frees what it does not return
        ByteBuf buf = held == null ? in : cumulate(ctx.alloc(), held, in);
        try {
            while (buf.isReadable() && ctx.channel().isOpen()) {
                int before = buf.readableBytes();
                cut(buf, cut);
                if (cut.isEmpty()) {
                    if (buf.readableBytes() == before) {
                        break;   // a frame's start: the rest comes with the next reads
                    }
                    continue;
                }
                Frame frame = (Frame) cut.get(0);
                cut.clear();
                sink.frame(ctx, frame);
            }
        } finally {
            for (Object f : cut) {
                ((Frame) f).release();
            }
            cut.clear();
            if (buf.isReadable()) {
                cumulation = buf;
            } else {
                buf.release();
            }
        }
        if (frameTimeoutNanos == 0) {
            return;
        }
        boolean partial = discarding > 0 || cumulation != null;
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
            long left = start + frameTimeoutNanos - System.nanoTime();
            if (left > 0) {
                watch(ctx, start, left);   // woken early
                return;
            }
            if (slowSenders != null) {
                slowSenders.run();
            }
            // however large its header says it is: a larger announcement buys no more time;
            // from the pipeline's head, so that the connection's own handler hears of it too
            ctx.pipeline().fireExceptionCaught(new FrameException("a frame of " + announced + " bytes did not arrive within "
                    + java.time.Duration.ofNanos(frameTimeoutNanos).toMillis() + " ms"));
        }, delayNanos, java.util.concurrent.TimeUnit.NANOSECONDS);
    }

    /** The framing of a connection broke: its bytes cannot be read on. */
    static final class FrameException extends DecoderException {
        FrameException(String message) {
            super(message);
        }
    }

    /**
     * Cuts at most one frame off {@code in} into {@code out}, or skips data of an oversized one; for
     * a reader that keeps its own buffer (a client's connection) as for this handler's pipeline.
     */
    void cut(ByteBuf in, List<Object> out) {
        if (closing) {
            in.skipBytes(in.readableBytes());   // the connection closes after the oversized frame's answer
            return;
        }
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
        if (!oversized && budget != null && reservedForFrame == 0 && in.readableBytes() < needed
                && body + Frame.HEADER_BYTES >= PRESIZED_FRAME_BYTES) {
            long n = Frame.HEADER_BYTES + body + READ_SLACK_BYTES;
            if (budget.reserve(n)) {
                reservedForFrame = n;
            } else if (in.readableBytes() >= Frame.HEADER_BYTES + metaBytes) {
                RpcMeta meta = meta(in, at + Frame.HEADER_BYTES, (int) metaBytes);
                in.skipBytes(Frame.HEADER_BYTES + (int) metaBytes);
                discard(in, dataBytes);
                out.add(Frame.overBudget(meta, dataBytes, Frame.HEADER_BYTES + body));
                return;
            }
        }
        if (in.readableBytes() < needed) {
            return;
        }
        RpcMeta meta = meta(in, at + Frame.HEADER_BYTES, (int) metaBytes);
        in.skipBytes(Frame.HEADER_BYTES + (int) metaBytes);
        if (oversized && budget != null) {
            closing = true;   // a server reads none of its data: the answer is ELIMIT, then the connection closes
            in.skipBytes(in.readableBytes());
            frameDone();
            out.add(new Frame(meta, null, dataBytes, Frame.HEADER_BYTES + body));
            return;
        }
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

    /** Skips {@code dataBytes} of data: those in {@code in} now, the rest as they arrive. */
    private void discard(ByteBuf in, long dataBytes) {
        discarding = dataBytes;
        int n = (int) Math.min(discarding, in.readableBytes());
        in.skipBytes(n);
        discarding -= n;
        if (discarding == 0) {
            frameDone();
        }
    }

    /** The frame under way is all in: the next one's clock starts at its first byte. */
    private void frameDone() {
        announced = 0;
        frameStart = 0;
        giveBackReservation();
    }

    /** A reservation not handed to a buffer (the frame came in without one, or the connection closed) goes back. */
    private void giveBackReservation() {
        if (reservedForFrame > 0) {
            budget.release(reservedForFrame);
            reservedForFrame = 0;
        }
    }

    /** Frees what the decoder holds: the bytes of a frame begun and not finished, its budget reservation. */
    void release() {
        if (cumulation != null) {
            cumulation.release();
            cumulation = null;
        }
        giveBackReservation();
    }

    private RpcMeta meta(ByteBuf in, int at, int length) {
        byte[] bytes = new byte[length];
        in.getBytes(at, bytes);
        try {
            RpcMeta meta = RpcMeta.decode(new ProtoInput(bytes, 0, length, metaLimits), lastService, lastMethod);
            if (meta.service() != null) {
                lastService = meta.service();
                lastMethod = meta.method();
            }
            return meta;
        } catch (WireFormatException e) {
            throw new FrameException("a malformed RpcMeta: " + e.getMessage());
        }
    }
}
