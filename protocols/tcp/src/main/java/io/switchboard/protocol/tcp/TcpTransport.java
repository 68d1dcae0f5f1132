package io.switchboard.protocol.tcp;

import io.netty.buffer.ByteBuf;
import io.switchboard.codec.message.MessageChecks;
import io.switchboard.codec.message.MessageLimits;
import io.switchboard.codec.message.NodeTable;
import io.switchboard.codec.proto.ProtoSchemas;
import io.switchboard.codec.message.WireFormatException;
import io.switchboard.codec.proto.ProtoCodec;
import io.switchboard.codec.proto.ProtoOutput;
import io.switchboard.idl.runtime.DeclaredFault;
import io.switchboard.idl.runtime.OperationDescriptor;
import io.switchboard.idl.runtime.ServiceDescriptor;
import io.switchboard.protocol.AsyncCalls;
import io.switchboard.protocol.CallOptions;
import io.switchboard.protocol.Endpoint;
import io.switchboard.protocol.RefusedException;
import io.switchboard.protocol.TraceContext;
import io.switchboard.protocol.TransportException;
import io.switchboard.protocol.WireBytes;
import io.switchboard.protocol.spi.PhaseMarks;
import io.switchboard.protocol.spi.Transport;
import java.net.URI;
import java.time.Duration;
import java.util.HashMap;
import java.util.Map;
import java.util.concurrent.CancellationException;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;

/**
 * Calls one component over tcp. The request is encoded and written as one frame by the calling
 * thread (a refused encoding, or a message over the frame limit, sends nothing); a blocking caller
 * reads its answer off the connection itself when no other thread is reading, and decodes it
 * ({@link ClientConnection}). Cancelling a non-blocking call, or a blocking call that times out or
 * is interrupted, sends a cancel frame: the server interrupts the operation. Thread-safe.
 */
final class TcpTransport implements Transport {
    private final TcpClient client;
    private final ServiceDescriptor descriptor;
    private final Endpoint endpoint;
    private final ProtoCodec codec;
    private final MessageLimits limits;
    private final String service;
    /** The endpoint's address parsed once, and the key of its server's connection in the client. */
    private final URI uri;
    private final String connectionKey;
    /** Each operation's service and method names as its request metas carry them, encoded once. */
    private final Map<String, byte[]> names;

    TcpTransport(TcpClient client, ServiceDescriptor descriptor, Endpoint endpoint) {
        this.client = client;
        this.descriptor = descriptor;
        this.endpoint = endpoint;
        this.uri = endpoint.uri();
        this.connectionKey = TcpClient.key(uri);
        this.codec = descriptor.codec(ProtoCodec.class);
        if (codec == null) {
            throw new IllegalArgumentException(descriptor.name() + " has no protobuf codec: recompile it with this Switchboard");
        }
        this.limits = MessageLimits.of(Math.min(client.settings().maxMessageBytes(), client.limits().maxFrameBytes()),
                client.settings().maxGraphNodes());
        this.service = ProtoSchemas.serviceName(descriptor.name());
        Map<String, byte[]> n = new HashMap<>();
        for (OperationDescriptor op : descriptor.operations()) {
            n.put(op.name(), RpcMeta.names(service, op.name()));
        }
        this.names = Map.copyOf(n);
    }

    @Override
    public String protocol() {
        return TcpProtocolProvider.NAME;
    }

    @Override
    public Endpoint endpoint() {
        return endpoint;
    }

    /** {@code unix} when calls go over the server's Unix domain socket on this host, else {@code tcp}. */
    @Override
    public String via() {
        return client.via(connectionKey);
    }

    @Override
    public Object call(OperationDescriptor operation, Object request, CallOptions options) throws DeclaredFault {
        Duration timeout = client.settings().timeoutFor(options);
        Sent sent = send(operation, request, options, timeout, null);
        Frame frame;
        try {
            frame = sent.connection.await(sent.call, System.nanoTime() + timeout.toNanos());
        } catch (TimeoutException e) {
            cancelOnWire(sent, operation);
            sent.call.dropAnswer();
            throw deadline(operation, timeout);
        } catch (InterruptedException e) {
            cancelOnWire(sent, operation);
            sent.call.dropAnswer();
            Thread.currentThread().interrupt();
            throw new TransportException(protocol(), TransportException.Delivery.MAY_HAVE_RUN, operation
                    + " was interrupted", e);
        } catch (CompletionException e) {
            throw (RuntimeException) e.getCause();
        }
        return read(operation, frame, options.wireBytes());
    }

    /**
     * Non-blocking: no thread waits while the server works; the answer is read by whichever thread
     * reads the connection and decoded on the client's executor, together with the other answers
     * of the same read ({@link ClientConnection.Answer}). Cancelling the future cancels the call on
     * the server: the thread that cancels writes the cancel frame itself, waiting for no other
     * thread (the client's executor may have to start one, or find it a CPU, first).
     */
    @Override
    public CompletableFuture<Object> callAsync(OperationDescriptor operation, Object request, CallOptions options) {
        Duration timeout = client.settings().timeoutFor(options);
        CompletableFuture<Object> result = new CompletableFuture<>();
        ClientConnection.Answer answer = new ClientConnection.Answer() {
            @Override
            public void answered(Frame frame) {
                if (result.isDone()) {
                    frame.release();   // cancelled after the answer came: nobody reads it
                    return;
                }
                try {
                    result.complete(read(operation, frame, options.wireBytes()));
                } catch (DeclaredFault | RuntimeException | Error e) {
                    result.completeExceptionally(e);
                }
            }

            @Override
            public void unread(RejectedExecutionException refused) {
                result.completeExceptionally(unreadable(operation, refused));
            }
        };
        Sent sent;
        try {
            sent = send(operation, request, options, timeout, answer);
        } catch (RuntimeException e) {
            return CompletableFuture.failedFuture(e);
        }
        sent.call.orTimeout(timeout.toNanos(), TimeUnit.NANOSECONDS).whenComplete((frame, failure) -> {
            if (failure == null || failure instanceof CancellationException) {
                return;   // an answer is settled by the connection; a cancel by its caller (cancelOnWire)
            }
            // off this thread (a timer's, or the one closing the connection), as answers are
            try {
                client.readers().execute(() -> {
                    if (failure instanceof TimeoutException) {
                        cancelOnWire(sent, operation);
                        result.completeExceptionally(deadline(operation, timeout));
                    } else {
                        result.completeExceptionally(AsyncCalls.unwrap(failure));
                    }
                });
            } catch (RejectedExecutionException e) {
                result.completeExceptionally(unreadable(operation, e));
            }
        });
        result.whenComplete((r, t) -> {
            if (result.isCancelled()) {
                cancelOnWire(sent, operation);
            }
        });
        sent.connection.ensureReader();
        return result;
    }

    private TransportException unreadable(OperationDescriptor operation, RejectedExecutionException refused) {
        return new TransportException(protocol(), TransportException.Delivery.MAY_HAVE_RUN, "the answer to " + operation
                + " cannot be read: the tcp client's executor refused it", refused);
    }

    private TransportException deadline(OperationDescriptor operation, Duration timeout) {
        return new TransportException(protocol(), TransportException.Delivery.MAY_HAVE_RUN, operation + " at "
                + endpoint.address() + " exceeded its deadline: no answer within " + timeout.toMillis() + " ms", null);
    }

    /** A request on the wire: its connection and the call its answer completes. */
    private record Sent(ClientConnection connection, ClientConnection.Call call) {
    }

    /**
     * Encodes the request and writes its frame on this thread (a non-blocking call's, sent while this
     * thread settles a batch of answers, with the batch's others: {@link ClientConnection}); a
     * request that cannot be encoded, or is over the frame limit, is refused before anything is sent.
     *
     * @param answer a non-blocking call's step for its answer; null for a blocking call
     */
    private Sent send(OperationDescriptor operation, Object request, CallOptions options, Duration timeout,
                      ClientConnection.Answer answer) {
        if (operation.service() != descriptor) {
            throw new IllegalArgumentException(operation + " is not an operation of " + descriptor.name());
        }
        PhaseMarks.mark(PhaseMarks.Phase.ENCODE_START);
        ProtoCodec.Writer writer;
        try {
            int maxNodes = client.settings().maxGraphNodes();
            NodeTable nodes = MessageChecks.of(descriptor).check(request, maxNodes);
            writer = NodeTable.during(nodes, () -> codec.writer(operation.requestElement().getLocalPart(), request, maxNodes));
        } catch (WireFormatException e) {
            throw new RefusedException(e.reason(), e.field(), operation + ": the request cannot be sent: " + e.getMessage(), e);
        }
        if (writer.size() > client.limits().maxFrameBytes()) {
            throw new RefusedException(WireFormatException.SIZE_LIMIT, operation + ": the request of " + writer.size()
                    + " bytes is over the tcp frame limit of " + client.limits().maxFrameBytes()
                    + " bytes; nothing was sent (larger messages go over grpc)");
        }
        Map<String, String> user = null;
        TraceContext trace = options.get(TraceContext.OPTION);
        if (trace != null) {
            user = new HashMap<>(4);
            user.put(TraceContext.TRACEPARENT, trace.traceparent());
            if (trace.tracestate() != null) {
                user.put(TraceContext.TRACESTATE, trace.tracestate());
            }
        }
        ClientConnection connection = client.connection(uri, connectionKey);
        ClientConnection.Call call = connection.open(operation.toString(), answer);
        int timeoutMillis = (int) Math.min(Integer.MAX_VALUE, Math.max(1, timeout.toMillis()));
        // the token is asked per call (it may rotate); over plain text it travels readable, as documented
        TcpCompression compression = options.get(TcpCompression.OPTION);
        ProtoOutput frame;
        try {
            frame = compression == null || compression == TcpCompression.NONE
                    ? Frame.request(names.get(operation.name()), options.callId(), timeoutMillis, call.id, user,
                            client.settings().tokenNow(), writer)
                    : Frame.request(names.get(operation.name()), options.callId(), timeoutMillis, call.id, user,
                            client.settings().tokenNow(), compression, writer);
        } catch (RuntimeException | Error e) {
            connection.forget(call);   // nothing was sent
            throw e;
        }
        PhaseMarks.mark(PhaseMarks.Phase.ENCODE_END);
        int frameBytes = frame.size();
        try {
            connection.send(call, frame.array(), frameBytes, System.nanoTime() + timeout.toNanos());
        } finally {
            FrameArrays.SHARED.give(frame.array());   // written, or held in a copy (a batch's)
        }
        PhaseMarks.mark(PhaseMarks.Phase.SEND_END);
        if (options.wireBytes() != null) {
            options.wireBytes().addSent(frameBytes);
        }
        return new Sent(connection, call);
    }

    /**
     * Forgets the call and tells the server to stop it, from this thread; an answer that comes
     * later is dropped (one that came already stays with the call's future).
     */
    private void cancelOnWire(Sent sent, OperationDescriptor operation) {
        if (sent.connection.forget(sent.call)) {
            sent.connection.sendQuietly(Frame.bytes(RpcMeta.request(service, operation.name(), null, 0, sent.call.id,
                    Map.of(TcpErrors.CANCEL, "1")).encode()));
        }
    }

    /** The answer's frame as the call's outcome; releases it. */
    private Object read(OperationDescriptor operation, Frame frame, WireBytes wire) throws DeclaredFault {
        try {
            PhaseMarks.mark(PhaseMarks.Phase.DECODE_START);
            if (wire != null) {
                wire.addReceived(frame.wireBytes);
            }
            RpcMeta meta = frame.meta;
            if (frame.oversized()) {
                throw new RefusedException(WireFormatException.SIZE_LIMIT, operation + ": the answer of "
                        + frame.dataBytes + " bytes is over the tcp frame limit of " + client.limits().maxFrameBytes()
                        + " bytes (the operation ran)");
            }
            if (meta.errorCode() == TcpErrors.DECLARED_FAULT && operation.faultInfoClass() != null) {
                throw operation.toException(decode(operation.faultElement().getLocalPart(), frame));
            }
            if (meta.errorCode() != 0) {
                throw TcpErrors.toException(meta, operation.toString(), endpoint.address());
            }
            if (operation.oneWay()) {
                return null;
            }
            Object response = decode(operation.responseElement().getLocalPart(), frame);
            PhaseMarks.mark(PhaseMarks.Phase.DECODE_END);
            return response;
        } catch (WireFormatException e) {
            throw new TransportException(protocol(), TransportException.Delivery.MAY_HAVE_RUN, "unreadable answer to "
                    + operation + " from " + endpoint.address() + ": " + e.getMessage(), e);
        } finally {
            frame.release();
        }
    }

    /** The frame's message, decompressed first if its meta says so (bounded by the message limit as it inflates). */
    private Object decode(String message, Frame frame) {
        ByteBuf data = frame.data;
        if (frame.meta.attachmentSize() != 0) {
            throw WireFormatException.malformed("RpcMeta.attachment_size", "an answer with an attachment, which this"
                    + " client does not take");
        }
        if (frame.meta.compressType() != 0) {
            TcpCompression compression = TcpCompression.ofWireType(frame.meta.compressType());
            if (compression == null) {
                throw WireFormatException.malformed("RpcMeta.compress_type", "an answer in compress_type "
                        + frame.meta.compressType() + ", which this client does not know");
            }
            data = FrameCompression.decompress(compression, data, limits.maxMessageBytes());
        }
        try {
            ProtoCodec.Reader reader = codec.reader(message, limits, data.readableBytes());
            Frame.readInto(reader, data);
            return reader.finish();
        } finally {
            if (data != frame.data) {
                data.release();
            }
        }
    }

    @Override
    public void close() {
        // the TcpClient owns the connection; a transport holds nothing of its own
    }

    @Override
    public String toString() {
        return "TcpTransport[" + descriptor.name() + " at " + endpoint.address() + "]";
    }
}
