package io.switchboard.protocol.grpc;

import io.grpc.ClientCall;
import io.grpc.ManagedChannel;
import io.grpc.Metadata;
import io.grpc.MethodDescriptor;
import io.grpc.Status;
import io.switchboard.idl.runtime.DeclaredFault;
import io.switchboard.idl.runtime.OperationDescriptor;
import io.switchboard.idl.runtime.ServiceDescriptor;
import io.switchboard.codec.message.MessageChecks;
import io.switchboard.codec.message.MessageLimits;
import io.switchboard.codec.message.NodeTable;
import io.switchboard.codec.message.WireFormatException;
import io.switchboard.codec.proto.ProtoCodec;
import io.switchboard.codec.proto.ProtoInput;
import io.switchboard.codec.proto.ProtoOutput;
import io.switchboard.codec.proto.ProtoSchemas;
import io.switchboard.protocol.CallOptions;
import io.switchboard.protocol.Endpoint;
import io.switchboard.protocol.spi.PhaseMarks;
import io.switchboard.protocol.RefusedException;
import io.switchboard.protocol.SwitchboardException;
import io.switchboard.protocol.spi.Transport;
import io.switchboard.protocol.spi.UnixSockets;
import io.switchboard.protocol.TraceContext;
import io.switchboard.protocol.TransportException;
import io.switchboard.protocol.WireBytes;
import java.time.Duration;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.Executor;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;

/**
 * Calls one component over gRPC, its messages those of the typed {@code .proto}. The request's
 * size pass runs before the call opens (a refused encoding sends nothing); its parts are written
 * and sent one at a time as fast as flow control allows, and the response's parts are merged on
 * the calling thread as they arrive. Thread-safe.
 */
final class GrpcTransport implements Transport {
    private static final Map<OperationDescriptor, MethodDescriptor<Part, Part>> METHODS = new ConcurrentHashMap<>();
    private static final Map<OperationDescriptor, MethodDescriptor<Part, Part>> ONE_PART_REQUESTS = new ConcurrentHashMap<>();

    /** The Empty response of a one-way operation: no fields, one empty part. */
    static final ProtoCodec EMPTY = new ProtoCodec() {
        @Override
        public Writer writer(String message, Object value, int maxNodes) {
            return new Writer() {
                private boolean written;

                @Override
                public long size() {
                    return 0;
                }

                @Override
                public void writePart(ProtoOutput out, int targetBytes) {
                    written = true;
                }

                @Override
                public boolean hasMore() {
                    return !written;
                }
            };
        }

        @Override
        public Reader reader(String message, MessageLimits limits, long expectedBytes) {
            return new Reader(limits) {
                @Override
                protected void merge(ProtoInput in) {
                    for (int tag = in.readTag(); tag != 0; tag = in.readTag()) {
                        in.skipField(tag);
                    }
                }

                @Override
                protected Object complete() {
                    return null;
                }
            };
        }
    };

    private final GrpcClient client;
    private final ServiceDescriptor descriptor;
    private final Endpoint endpoint;
    private final ManagedChannel channel;
    private final ProtoCodec codec;
    private final MessageLimits limits;

    /** {@link UnixSockets#VIA_UNIX} over the server's Unix socket, else {@link UnixSockets#VIA_TCP}. */
    private final String via;

    GrpcTransport(GrpcClient client, ServiceDescriptor descriptor, Endpoint endpoint, ManagedChannel channel, String via) {
        this.via = via;
        this.client = client;
        this.descriptor = descriptor;
        this.endpoint = endpoint;
        this.channel = channel;
        this.codec = descriptor.codec(ProtoCodec.class);
        if (codec == null) {
            throw new IllegalArgumentException(descriptor.name() + " has no protobuf codec: recompile it with this Switchboard");
        }
        this.limits = MessageLimits.of(client.settings().maxMessageBytes(), client.settings().maxGraphNodes());
    }

    /**
     * The gRPC method of an operation: {@code switchboard.<name>.<Name>/<operation>}, unary, or
     * bidirectional streaming of partial messages when the typed {@code .proto} says it streams.
     */
    static MethodDescriptor<Part, Part> method(OperationDescriptor op) {
        return METHODS.computeIfAbsent(op, o -> MethodDescriptor.<Part, Part>newBuilder()
                .setType(streams(o) ? MethodDescriptor.MethodType.BIDI_STREAMING : MethodDescriptor.MethodType.UNARY)
                .setFullMethodName(MethodDescriptor.generateFullMethodName(
                        ProtoSchemas.serviceName(o.service().name()), o.name()))
                .setRequestMarshaller(Part.MARSHALLER)
                .setResponseMarshaller(Part.MARSHALLER)
                .setIdempotent(o.idempotent())
                .build());
    }

    /**
     * A streamed method as this client calls it with a request of one part: the same method on the
     * wire (a stream that carries one message, then the half-close), but gRPC sends the message
     * with the half-close in one HTTP/2 frame, as for a unary request, rather than flushing the
     * message alone first. Server and {@code .proto} keep the streaming method.
     */
    static MethodDescriptor<Part, Part> onePartRequest(OperationDescriptor op) {
        return ONE_PART_REQUESTS.computeIfAbsent(op, o -> method(o).toBuilder()
                .setType(MethodDescriptor.MethodType.SERVER_STREAMING)
                .build());
    }

    static boolean streams(OperationDescriptor op) {
        return ProtoSchemas.streams(op.service().model(), op.model());
    }

    /** {@link #streams}, as the cached method says: no walk of the schema on every call. */
    static boolean streamed(OperationDescriptor op) {
        return method(op).getType() != MethodDescriptor.MethodType.UNARY;
    }

    /** The size a part aims at: {@link ProtoCodec#PART_BYTES} when the method streams; a unary method's message is one part. */
    static int partTarget(OperationDescriptor op) {
        return streamed(op) ? ProtoCodec.PART_BYTES : Integer.MAX_VALUE;
    }

    @Override
    public String protocol() {
        return GrpcProtocolProvider.NAME;
    }

    @Override
    public Endpoint endpoint() {
        return endpoint;
    }

    @Override
    public String via() {
        return via;
    }

    @Override
    public Object call(OperationDescriptor operation, Object request, CallOptions options) throws DeclaredFault {
        ProtoCodec.Writer writer = encode(operation, request);
        int target = partTarget(operation);
        if (writer.size() > target) {
            return callOnEventLoop(operation, options, writer, target);
        }
        // the call's callbacks run on this thread while it waits, as in grpc-java's blocking stub:
        // the event loop hands over the response with an unpark, not a monitor and a notify
        CallerExecutor caller = new CallerExecutor();
        try {
            return call(operation, options, writer, target, caller);
        } finally {
            caller.shutdown();
        }
    }

    /** A request within one part by its size. */
    private Object call(OperationDescriptor operation, CallOptions options, ProtoCodec.Writer writer, int target,
                        CallerExecutor caller) throws DeclaredFault {
        // written now: whether it did fit in one part (the writer cuts a packed field with some room
        // to spare) decides how the call is made
        ProtoOutput out = new ProtoOutput((int) writer.size() + 64);
        writer.writePart(out, target);
        ClientCall<Part, Part> call = newCall(operation, options, caller, !writer.hasMore());
        Listener listener = new Listener(call, operation, client.settings().timeoutFor(options), options.wireBytes());
        listener.runOn(caller);
        start(call, listener, options, writer);
        return exchange(operation, call, listener, () -> {
            // A message of one part goes out with the headers, without waiting for the stream to be
            // ready: gRPC holds it until the stream exists. Waiting cost a hand-off to the event loop
            // and back on every small call.
            if (writer.hasMore()) {
                listener.awaitReady();
            }
            Part first = new Part(out);
            call.sendMessage(first);
            // counted once the call did not fail as undelivered: a refused connection put nothing on the wire
            listener.unconfirmedSent = first.wireLength();
            while (writer.hasMore()) {
                out.reset();
                writer.writePart(out, target);
                listener.awaitReady();
                Part part = new Part(out);
                call.sendMessage(part);
                listener.countSent(part.wireLength());
            }
            call.halfClose();
            PhaseMarks.mark(PhaseMarks.Phase.SEND_END);
        });
    }

    /**
     * A request of several parts: sent from gRPC's readiness callbacks on the event loop, each part
     * written straight into gRPC's buffers ({@link Part#Part(ProtoCodec.Writer, int, byte[])}),
     * and the response merged there as its parts arrive ({@link PartQueue#readOnArrival}); the
     * calling thread waits for the end. The bytes of a large call then pass between two threads
     * (the event loops of client and server), not four: a hand-off per part cost about a sixth of
     * the round trip of {@code double[10^7]} (docs/benchmarks/bulk.md).
     */
    private Object callOnEventLoop(OperationDescriptor operation, CallOptions options, ProtoCodec.Writer writer,
                                   int target) throws DeclaredFault {
        ClientCall<Part, Part> call = newCall(operation, options, null, false);
        Listener listener = new Listener(call, operation, client.settings().timeoutFor(options), options.wireBytes()) {
            private final byte[] block = new byte[Part.BLOCK_BYTES];
            private boolean first = true;
            private boolean halfClosed;

            /** Sends what flow control allows now; the next onReady sends more. */
            @Override
            synchronized void send() {
                try {
                    while (!halfClosed && call.isReady() && writer.hasMore()) {
                        Part part = new Part(writer, target, block);
                        call.sendMessage(part);
                        if (!part.taken()) {
                            halfClosed = true; // the call is over: gRPC takes no more messages
                            return;
                        }
                        if (first) {
                            // counted once the call did not fail as undelivered: a refused connection put nothing on the wire
                            unconfirmedSent = part.wireLength();
                            first = false;
                        } else {
                            countSent(part.wireLength());
                        }
                    }
                    if (!halfClosed && !writer.hasMore()) {
                        halfClosed = true;
                        call.halfClose();
                        PhaseMarks.mark(PhaseMarks.Phase.SEND_END);
                    }
                } catch (RuntimeException | Error e) {
                    halfClosed = true;
                    call.cancel("client failure", e);
                }
            }
        };
        listener.queue.readOnArrival(listener.response);
        start(call, listener, options, writer);
        return exchange(operation, call, listener, listener::send);
    }

    /**
     * Non-blocking: the request's parts go out from gRPC's readiness callbacks and no thread
     * waits while the server works; the response is decoded on a client thread once its first
     * part (or the end of the call) arrives. Cancelling the future cancels the gRPC call: the
     * server sees CANCELLED and interrupts the operation ({@code ServerCallContext.isCancelled()}).
     */
    @Override
    public CompletableFuture<Object> callAsync(OperationDescriptor operation, Object request, CallOptions options) {
        CompletableFuture<Object> result = new CompletableFuture<>();
        ProtoCodec.Writer writer;
        ClientCall<Part, Part> call;
        try {
            writer = encode(operation, request);
            call = newCall(operation, options, null, false);
        } catch (RuntimeException e) {
            return CompletableFuture.failedFuture(e);
        }
        int target = partTarget(operation);
        Listener listener = new Listener(call, operation, client.settings().timeoutFor(options), options.wireBytes()) {
            private boolean halfClosed;
            private final AtomicBoolean reading = new AtomicBoolean();
            private ProtoOutput out;

            @Override
            public void onMessage(Part message) {
                super.onMessage(message);
                read();
            }

            @Override
            public void onClose(Status status, Metadata trailers) {
                super.onClose(status, trailers);
                read();
            }

            /** Sends what flow control allows now; the next onReady sends more. */
            @Override
            synchronized void send() {
                try {
                    // the first part goes out at once, as in the blocking form: gRPC holds it until the
                    // stream exists (a new unary call on a new connection may not report ready before)
                    while (!halfClosed && !result.isDone() && (out == null || call.isReady()) && writer.hasMore()) {
                        if (out == null) {
                            out = new ProtoOutput((int) Math.min(writer.size(), target) + 64);
                        }
                        out.reset();
                        writer.writePart(out, target);
                        Part part = new Part(out);
                        call.sendMessage(part);
                        countSent(part.wireLength());
                    }
                    if (!halfClosed && !result.isDone() && !writer.hasMore()) {
                        halfClosed = true;
                        call.halfClose();
                    }
                } catch (RuntimeException | Error e) {
                    call.cancel("client failure", e);
                }
            }

            /** The response is read on a client thread, taking parts as they arrive, as the blocking form does. */
            private void read() {
                if (reading.compareAndSet(false, true)) {
                    try {
                        client.readers().execute(() -> {
                            try {
                                result.complete(exchange(operation, call, this, () -> { }));
                            } catch (DeclaredFault | RuntimeException | Error e) {
                                result.completeExceptionally(e);
                            }
                        });
                    } catch (RejectedExecutionException closing) {
                        call.cancel("the gRPC client is closed", null);
                        queue.close();
                        result.completeExceptionally(new TransportException(protocol(),
                                TransportException.Delivery.MAY_HAVE_RUN, operation + ": the gRPC client was closed "
                                + "while the call was under way", closing));
                    }
                }
            }
        };
        result.whenComplete((r, t) -> {
            if (result.isCancelled()) {
                call.cancel("cancelled by the caller", null);
            }
        });
        try {
            start(call, listener, options, writer);
            listener.send();
        } catch (RuntimeException e) {
            call.cancel("client failure", e);
            result.completeExceptionally(e);
        }
        return result;
    }

    /** The size pass of the request, before the call opens: a refused request sends nothing. */
    private ProtoCodec.Writer encode(OperationDescriptor operation, Object request) {
        if (operation.service() != descriptor) {
            throw new IllegalArgumentException(operation + " is not an operation of " + descriptor.name());
        }
        PhaseMarks.mark(PhaseMarks.Phase.ENCODE_START);
        try {
            int maxNodes = client.settings().maxGraphNodes();
            NodeTable nodes = MessageChecks.of(descriptor).check(request, maxNodes);
            ProtoCodec.Writer writer = NodeTable.during(nodes,
                    () -> codec.writer(operation.requestElement().getLocalPart(), request, maxNodes));
            PhaseMarks.mark(PhaseMarks.Phase.ENCODE_END);
            return writer;
        } catch (WireFormatException e) {
            throw new RefusedException(e.reason(), e.field(), operation + ": the request cannot be sent: " + e.getMessage(), e);
        }
    }

    /**
     * A call whose callbacks run on {@code executor}, or on the event loop when null; {@code onePart}
     * when the request is one part and sent at once ({@link #onePartRequest}).
     */
    private ClientCall<Part, Part> newCall(OperationDescriptor operation, CallOptions options, Executor executor,
                                           boolean onePart) {
        Duration timeout = client.settings().timeoutFor(options);
        io.grpc.CallOptions callOptions = io.grpc.CallOptions.DEFAULT.withDeadlineAfter(timeout.toNanos(), TimeUnit.NANOSECONDS);
        if (executor != null) {
            callOptions = callOptions.withExecutor(executor);
        }
        if (onePart && streamed(operation)) {
            return channel.newCall(onePartRequest(operation), callOptions);
        }
        return channel.newCall(method(operation), streamed(operation)
                ? callOptions.withOnReadyThreshold(NettyTuning.ON_READY_THRESHOLD) : callOptions);
    }

    private void start(ClientCall<Part, Part> call, Listener listener, CallOptions options,
                       ProtoCodec.Writer writer) {
        Metadata headers = new Metadata();
        String token = client.settings().tokenNow();   // asked per call: tokens rotate
        if (token != null) {
            headers.put(GrpcErrors.AUTHORIZATION, "Bearer " + token);
        }
        if (options.callId() != null) {
            headers.put(GrpcErrors.CALL_ID, options.callId());
        }
        TraceContext trace = options.get(TraceContext.OPTION);
        if (trace != null) {
            headers.put(GrpcErrors.TRACEPARENT, trace.traceparent());
            if (trace.tracestate() != null) {
                headers.put(GrpcErrors.TRACESTATE, trace.tracestate());
            }
        }
        headers.put(GrpcErrors.SIZE, Long.toString(writer.size()));
        call.start(listener, headers);
        call.request(PartQueue.WINDOW);
    }

    /** Sends the request ({@code send}) and reads the response of a started call. */
    private Object exchange(OperationDescriptor operation, ClientCall<Part, Part> call, Listener listener,
                            Runnable send) throws DeclaredFault {
        try {
            send.run();
            try {
                // parts read on arrival leave only the end (or the failure) to take here
                for (Part part = listener.queue.take(); part != null; part = listener.queue.take()) {
                    listener.response.accept(part);
                }
            } catch (FaultArrived fault) {
                Object info = codec.fromBytes(operation.faultElement().getLocalPart(), fault.info, limits);
                throw operation.toException(info);
            }
            Object response = listener.response.finish();
            PhaseMarks.mark(PhaseMarks.Phase.DECODE_END);
            return response;
        } catch (WireFormatException e) {
            call.cancel("the client cannot read the response", null);
            throw new TransportException(protocol(), TransportException.Delivery.MAY_HAVE_RUN,
                    "unreadable response to " + operation + " from " + endpoint.address() + ": " + e.getMessage(), e);
        } catch (PartQueue.CallInterruptedException e) {
            call.cancel("the calling thread was interrupted", null);
            throw new TransportException(protocol(), TransportException.Delivery.MAY_HAVE_RUN,
                    operation + " was interrupted", e);
        } catch (SwitchboardException e) {
            listener.undelivered = e instanceof TransportException t
                    && t.delivery() == TransportException.Delivery.NOT_DELIVERED;
            throw e;
        } catch (RuntimeException | Error e) {
            call.cancel("client failure", e);
            throw e;
        } finally {
            listener.queue.close();
            if (!listener.undelivered) {
                listener.countSent(listener.unconfirmedSent);
            }
        }
    }

    /** The call ended with the operation's declared fault; its message bytes from the status details. */
    private static final class FaultArrived extends RuntimeException {
        final byte[] info;

        FaultArrived(byte[] info) {
            super("declared fault", null, false, false);
            this.info = info;
        }
    }

    @Override
    public void close() {
        // the GrpcClient owns the channel; a transport holds nothing of its own
    }

    @Override
    public String toString() {
        return "GrpcTransport[" + descriptor.name() + " at " + endpoint.address() + "]";
    }

    /** Receives the response parts and the final status; wakes the calling thread. */
    private class Listener extends ClientCall.Listener<Part> {
        final PartQueue queue;
        /** The response, merged as its parts are taken (or as they arrive); made once the headers, with the size, are in. */
        final MessageReader response;
        private final ClientCall<Part, Part> call;
        private final OperationDescriptor operation;
        private volatile SwitchboardException failure;
        private volatile boolean closed;
        private final Object ready = new Object();
        private final WireBytes wire;
        /** Bytes handed to gRPC before the stream existed: on the wire only if the call was not refused. */
        volatile long unconfirmedSent;
        boolean undelivered;
        /** Runs this call's callbacks on the calling thread (a blocking call), or null: they run on the event loop. */
        private CallerExecutor caller;

        Listener(ClientCall<Part, Part> call, OperationDescriptor operation, Duration timeout, WireBytes wire) {
            this.call = call;
            this.wire = wire;
            this.operation = operation;
            // the deadline ends the call long before this; it only guards against a lost close
            this.queue = new PartQueue(call::request, timeout.plusSeconds(30), () -> new TransportException(protocol(),
                    TransportException.Delivery.MAY_HAVE_RUN, operation + ": no answer from " + endpoint.address(), null),
                    limits.maxMessageBytes());
            this.response = new MessageReader(() -> operation.oneWay() ? EMPTY.reader("", limits, 0)
                    : codec.reader(operation.responseElement().getLocalPart(), limits, queue.announced()));
        }

        @Override
        public void onHeaders(Metadata headers) {
            queue.announce(GrpcErrors.size(headers));
        }

        @Override
        public void onMessage(Part message) {
            if (wire != null) {
                wire.addReceived(message.wireLength());
            }
            PhaseMarks.mark(PhaseMarks.Phase.ARRIVED);
            queue.add(message);
        }

        void countSent(long bytes) {
            if (wire != null && bytes > 0) {
                wire.addSent(bytes);
            }
        }

        @Override
        public void onClose(Status status, Metadata trailers) {
            closed = true;
            byte[] fault = status.isOk() ? null : GrpcErrors.faultInfo(operation, status, trailers);
            if (status.isOk()) {
                queue.end();
            } else if (fault != null) {
                queue.fail(new FaultArrived(fault));
            } else {
                failure = GrpcErrors.toException(status, trailers, operation.toString(), endpoint.address());
                queue.fail(failure);
            }
            synchronized (ready) {
                ready.notifyAll();
            }
        }

        @Override
        public void onReady() {
            send();
            synchronized (ready) {
                ready.notifyAll();
            }
        }

        void runOn(CallerExecutor caller) {
            this.caller = caller;
            queue.arriveOn(caller);
        }

        /**
         * Sends what flow control allows now, on each {@code onReady}: the non-blocking form and a
         * request of several parts send from here; a blocking call of one part sends on its own thread.
         */
        void send() {
        }

        /** Blocks until gRPC takes another part; fails at once if the call already ended (say, refused). */
        void awaitReady() {
            synchronized (ready) {
                while (!call.isReady()) {
                    if (failure != null) {
                        throw failure;
                    }
                    if (closed) {
                        return; // ended well without reading everything: the reader will see the end
                    }
                    try {
                        if (caller != null) {
                            caller.runWaiting(TimeUnit.SECONDS.toNanos(1)); // onReady runs on this thread
                        } else {
                            ready.wait(1000);
                        }
                    } catch (InterruptedException e) {
                        Thread.currentThread().interrupt();
                        throw new PartQueue.CallInterruptedException();
                    }
                }
            }
        }
    }
}
