package io.switchboard.protocol.tcp;

import io.netty.buffer.ByteBuf;
import io.netty.channel.ChannelHandlerContext;
import io.switchboard.codec.message.MessageChecks;
import io.switchboard.codec.message.MessageLimits;
import io.switchboard.codec.message.NodeTable;
import io.switchboard.codec.message.WireFormatException;
import io.switchboard.codec.proto.ProtoCodec;
import io.switchboard.idl.runtime.DeclaredFault;
import io.switchboard.idl.runtime.OperationDescriptor;
import io.switchboard.protocol.ServerCallContext;
import io.switchboard.protocol.Skeleton;
import io.switchboard.protocol.TraceContext;
import io.switchboard.protocol.spi.CallerIdentity;
import io.switchboard.protocol.spi.PhaseMarks;
import java.util.concurrent.TimeUnit;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * One call of a tcp connection, from its decoded frame to its answer: run on a worker, or on the
 * event loop for a fast operation ({@link InlineRuns}); cancelled by a cancel frame, its timeout or
 * the connection closing. The connection that owns it is told when it ends ({@link Owner#end}), and
 * only the first of the answer, the timeout and a cancel answers the caller.
 */
final class TcpCall implements Runnable {
    private static final Logger LOG = LoggerFactory.getLogger(TcpCall.class);

    /** The connection a call runs for: it holds the calls under way by correlation id. */
    interface Owner {
        /** Ends {@code call}'s place among the calls under way; false when it had ended already (answered, timed out, cancelled). */
        boolean end(long correlationId, TcpCall call);

        /** Writes a call's answer frame, on any thread. */
        void sendAnswer(ChannelHandlerContext ctx, ByteBuf frame);
    }

    private final ChannelHandlerContext ctx;
    private final Owner connection;
    private final MessageLimits limits;
    private final int maxGraphNodes;
    private final long maxFrameBytes;
    private final Skeleton skeleton;
    private final OperationDescriptor op;
    private final RpcMeta meta;
    private ByteBuf data;
    private volatile boolean cancelled;
    /** Run on the event loop without a place among the connection's calls under way: nothing to end. */
    private boolean unlisted;
    private Thread worker;
    /** What the operation asks about its call: the deadline ({@code timeout_ms}), whether it was cancelled. */
    private final ServerCallContext context;
    /** Who calls; a token that did not verify refuses the call before its operation runs. */
    private final CallerIdentity caller;
    volatile io.netty.util.concurrent.ScheduledFuture<?> deadline;

    private final InlineRuns inline;
    /** When the run began, and how long it took until its answer was ready to write. */
    private long start;
    private long ranNanos;

    TcpCall(ChannelHandlerContext ctx, Owner connection, Skeleton skeleton, OperationDescriptor op, RpcMeta meta,
            ByteBuf data, InlineRuns inline, CallerIdentity caller, MessageLimits limits, int maxGraphNodes,
            long maxFrameBytes, io.switchboard.protocol.TlsSettings tls, javax.net.ssl.SSLSession tlsSession) {
        this.limits = limits;
        this.maxGraphNodes = maxGraphNodes;
        this.maxFrameBytes = maxFrameBytes;
        this.caller = caller;
        this.inline = inline;
        this.ctx = ctx;
        this.connection = connection;
        this.skeleton = skeleton;
        this.op = op;
        this.meta = meta;
        this.data = data;
        this.context = ServerCallContext.create(meta.timeoutMillis() > 0
                ? System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(meta.timeoutMillis()) : null, trace(meta),
                caller.peer()).trustedBy(tls, tlsSession);
    }

    synchronized void cancel() {
        cancelled = true;
        context.cancel();   // the operation's own calls under way are cancelled in turn
        if (worker != null) {
            worker.interrupt();
        }
    }

    void timedOut() {
        if (connection.end(meta.correlationId(), this)) {
            cancel();
            TcpServer.answer(ctx, timedOutAnswer());
        }
    }

    private RpcMeta timedOutAnswer() {
        return RpcMeta.response(meta.correlationId(), TcpErrors.TIMED_OUT, op + ": its timeout of "
                + meta.timeoutMillis() + " ms passed on the server", null);
    }

    /** Runs the call on the event loop that read it, not listed among the connection's calls under way. */
    void runUnlisted() {
        unlisted = true;
        run();
    }

    /** Runs the call: on a worker, or on the event loop for a fast operation (never interrupted there). */
    @Override
    public void run() {
        boolean onLoop = ctx.executor().inEventLoop();
        synchronized (this) {
            if (cancelled) {
                release();
                return;
            }
            if (!onLoop) {
                worker = Thread.currentThread();
            }
        }
        start = System.nanoTime();
        try {
            serve();
            inline.ran(ranNanos, onLoop);
        } catch (RuntimeException | Error e) {
            LOG.warn("{} failed inside the tcp protocol", op, e);
            finish(TcpErrors.failure(meta.correlationId(), e), null);
        } finally {
            release();
            synchronized (this) {
                worker = null;
            }
            if (!onLoop) {
                Thread.interrupted(); // a late cancel must not leak into the pool thread's next call
            }
        }
    }

    private void release() {
        if (data != null) {
            data.release();
            data = null;
        }
    }

    private void serve() {
        ProtoCodec codec = op.service().codec(ProtoCodec.class);
        Object request;
        TcpCompression compression = TcpCompression.ofWireType(meta.compressType());   // known: the server checked
        try {
            if (compression != TcpCompression.NONE) {
                ByteBuf plain = FrameCompression.decompress(compression, data, limits.maxMessageBytes());
                data.release();
                data = plain;
            }
            ProtoCodec.Reader reader = codec.reader(op.requestElement().getLocalPart(), limits, data.readableBytes());
            Frame.readInto(reader, data);
            request = reader.finish();
            PhaseMarks.mark(PhaseMarks.Phase.DECODE_END);
        } catch (WireFormatException e) {
            skeleton.refused(op, e.reason());
            finish(TcpErrors.refusal(meta.correlationId(), e, op.toString()), null);
            return;
        } finally {
            release();
        }
        Object response;
        // an event loop running a fast operation itself is never interrupted: a cancel only flags the call
        try (ServerCallContext.Scope scope = context.enter(!ctx.executor().inEventLoop())) {
            caller.checkVerified();
            response = skeleton.invoke(op, request, meta.requestId());
        } catch (DeclaredFault fault) {
            ProtoCodec.Writer w;
            try {
                NodeTable nodes = MessageChecks.of(op.service()).check(fault.faultInfo(), maxGraphNodes);
                w = NodeTable.during(nodes, () -> codec.writer(op.faultElement().getLocalPart(), fault.faultInfo(),
                        maxGraphNodes));
            } catch (WireFormatException e) {
                finish(TcpErrors.failure(meta.correlationId(), new IllegalStateException("the declared fault of "
                        + op + " cannot be sent: " + e.getMessage())), null);
                return;
            }
            finish(RpcMeta.response(meta.correlationId(), TcpErrors.DECLARED_FAULT,
                    fault.getMessage() != null ? fault.getMessage() : op.faultElement().getLocalPart(), null), w);
            return;
        } catch (RuntimeException e) {
            finish(TcpErrors.failure(meta.correlationId(), e), null);
            return;
        }
        PhaseMarks.mark(PhaseMarks.Phase.ENCODE_START);
        ProtoCodec.Writer writer = null;
        if (!op.oneWay()) {
            try {
                NodeTable nodes = MessageChecks.of(op.service()).check(response, maxGraphNodes);
                writer = NodeTable.during(nodes, () -> codec.writer(op.responseElement().getLocalPart(), response,
                        maxGraphNodes));
            } catch (WireFormatException e) {
                finish(TcpErrors.failure(meta.correlationId(), new IllegalStateException("the response of " + op
                        + " cannot be sent: " + e.getMessage())), null);
                return;
            }
        }
        finish(RpcMeta.response(meta.correlationId(), 0, null, null), writer);
    }

    /**
     * Sends the answer, unless the call was cancelled or timed out. An operation that ends after
     * its deadline (one that noticed the deadline itself, before the timer on its event loop ran)
     * is answered as timed out too, as the timer would have: past its deadline a call fails,
     * whichever of the two ends it.
     */
    private void finish(RpcMeta answer, ProtoCodec.Writer writer) {
        ranNanos = System.nanoTime() - start;
        io.netty.util.concurrent.ScheduledFuture<?> d = deadline;
        if (d != null) {
            d.cancel(false);
        }
        if (!(unlisted || connection.end(meta.correlationId(), this)) || cancelled) {
            return;
        }
        if (context.expired()) {
            answer = timedOutAnswer();
            writer = null;
        }
        byte[] m = answer.encode();
        if (writer != null && writer.size() > maxFrameBytes) {
            m = RpcMeta.response(meta.correlationId(), TcpErrors.ANSWER_TOO_LARGE, "the response of " + op + " ("
                    + writer.size() + " bytes) is over the tcp frame limit of " + maxFrameBytes
                    + " bytes; the operation ran", null).encode();
            writer = null;
        }
        ByteBuf frame = writer != null && meta.compressType() != 0 ? compressedFrame(answer, writer)
                : Frame.encode(ctx.alloc(), m, writer);
        PhaseMarks.mark(PhaseMarks.Phase.ENCODE_END);
        connection.sendAnswer(ctx, frame);
    }

    /**
     * An answer with its message in the request's compression (its meta saying so); if it cannot be
     * compressed, an error answer without a message, since the caller is owed an answer either way.
     */
    private ByteBuf compressedFrame(RpcMeta answer, ProtoCodec.Writer writer) {
        try {
            byte[] data = Frame.compressed(TcpCompression.ofWireType(meta.compressType()), writer);
            return Frame.encodeRaw(ctx.alloc(), answer.withCompressType(meta.compressType()).encode(), data);
        } catch (RuntimeException | Error e) {
            LOG.warn("{}: its answer cannot be compressed", op, e);
            return Frame.encode(ctx.alloc(), TcpErrors.failure(meta.correlationId(), new IllegalStateException(
                    "the answer of " + op + " cannot be compressed: " + e)).encode(), null);
        }
    }

    static TraceContext trace(RpcMeta meta) {
        String parent = meta.userField(TraceContext.TRACEPARENT);
        return parent == null ? null : TraceContext.of(parent, meta.userField(TraceContext.TRACESTATE));
    }
}
