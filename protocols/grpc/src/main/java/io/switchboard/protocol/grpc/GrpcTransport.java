package io.switchboard.protocol.grpc;

import io.grpc.ClientCall;
import io.grpc.ManagedChannel;
import io.grpc.Metadata;
import io.grpc.MethodDescriptor;
import io.grpc.Status;
import io.switchboard.idl.runtime.DeclaredFault;
import io.switchboard.idl.runtime.OperationDescriptor;
import io.switchboard.idl.runtime.ServiceDescriptor;
import io.switchboard.codec.binary.BinaryCodec;
import io.switchboard.codec.binary.BinaryLimits;
import io.switchboard.codec.binary.BinaryReader;
import io.switchboard.codec.binary.BinaryWriter;
import io.switchboard.codec.binary.WireFormat;
import io.switchboard.codec.binary.WireFormatException;
import io.switchboard.protocol.CallOptions;
import io.switchboard.protocol.Endpoint;
import io.switchboard.protocol.spi.PhaseMarks;
import io.switchboard.protocol.RefusedException;
import io.switchboard.protocol.SwitchboardException;
import io.switchboard.protocol.spi.Transport;
import io.switchboard.protocol.TransportException;
import io.switchboard.protocol.WireBytes;
import java.time.Duration;
import java.util.Iterator;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;

/**
 * Calls one component over gRPC. The request is encoded before the call opens (a refused encoding
 * sends nothing), streamed in chunks as fast as flow control allows, and the response is decoded
 * on the calling thread while its chunks arrive. Thread-safe.
 */
final class GrpcTransport implements Transport {
    private static final Map<OperationDescriptor, MethodDescriptor<Frame, Frame>> METHODS = new ConcurrentHashMap<>();

    private final GrpcClient client;
    private final ServiceDescriptor descriptor;
    private final Endpoint endpoint;
    private final ManagedChannel channel;
    private final BinaryCodec codec;
    private final BinaryLimits limits;

    GrpcTransport(GrpcClient client, ServiceDescriptor descriptor, Endpoint endpoint, ManagedChannel channel) {
        this.client = client;
        this.descriptor = descriptor;
        this.endpoint = endpoint;
        this.channel = channel;
        this.codec = descriptor.codec(BinaryCodec.class);
        if (codec == null) {
            throw new IllegalArgumentException(descriptor.name() + " has no binary codec: recompile it with this Switchboard");
        }
        this.limits = BinaryLimits.of(client.settings().maxMessageBytes(), client.settings().maxGraphNodes());
    }

    /** The gRPC method of an operation: {@code switchboard.<name>.<Name>/<operation>}, bidirectional streaming. */
    static MethodDescriptor<Frame, Frame> method(OperationDescriptor op) {
        return METHODS.computeIfAbsent(op, o -> MethodDescriptor.<Frame, Frame>newBuilder()
                .setType(MethodDescriptor.MethodType.BIDI_STREAMING)
                .setFullMethodName(MethodDescriptor.generateFullMethodName(
                        WireFormat.grpcServiceName(o.service().name()), o.name()))
                .setRequestMarshaller(Frame.MARSHALLER)
                .setResponseMarshaller(Frame.MARSHALLER)
                .setIdempotent(o.idempotent())
                .build());
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
    public Object call(OperationDescriptor operation, Object request, CallOptions options) throws DeclaredFault {
        BinaryWriter out = encode(operation, request);
        ClientCall<Frame, Frame> call = newCall(operation, options);
        Listener listener = new Listener(call, operation, client.settings().timeoutFor(options), options.wireBytes());
        start(call, listener, options);
        return exchange(operation, call, listener, () -> {
            Iterator<Frame> frames = Frame.split(out.segments(), out.size());
            // A message of one chunk goes out with the headers, without waiting for the stream to be
            // ready: gRPC holds it until the stream exists (at most 1 MiB), and the frame's scratch
            // array is not reused. Waiting cost a hand-off to the event loop and back on every small call.
            Frame first = frames.next();
            if (frames.hasNext()) {
                listener.awaitReady();
            }
            call.sendMessage(first);
            // counted once the call did not fail as undelivered: a refused connection put nothing on the wire
            listener.unconfirmedSent = ((Frame.Outgoing) first).length();
            while (frames.hasNext()) {
                listener.awaitReady();
                Frame frame = frames.next();
                call.sendMessage(frame);
                listener.countSent(frame);
            }
            call.halfClose();
            PhaseMarks.mark(PhaseMarks.Phase.SEND_END);
        });
    }

    /**
     * Non-blocking: the request's chunks go out from gRPC's readiness callbacks and no thread
     * waits while the server works; the response is decoded on a client thread once its first
     * chunk (or the end of the call) arrives. Cancelling the future cancels the gRPC call: the
     * server sees CANCELLED and interrupts the operation ({@code ServerCallContext.isCancelled()}).
     */
    @Override
    public CompletableFuture<Object> callAsync(OperationDescriptor operation, Object request, CallOptions options) {
        CompletableFuture<Object> result = new CompletableFuture<>();
        BinaryWriter out;
        ClientCall<Frame, Frame> call;
        try {
            out = encode(operation, request);
            call = newCall(operation, options);
        } catch (RuntimeException e) {
            return CompletableFuture.failedFuture(e);
        }
        Iterator<Frame> frames = Frame.split(out.segments(), out.size());
        Listener listener = new Listener(call, operation, client.settings().timeoutFor(options), options.wireBytes()) {
            private boolean halfClosed;
            private final AtomicBoolean reading = new AtomicBoolean();

            @Override
            public void onMessage(Frame message) {
                super.onMessage(message);
                read();
            }

            @Override
            public void onClose(Status status, Metadata trailers) {
                super.onClose(status, trailers);
                read();
            }

            @Override
            public void onReady() {
                send();
            }

            /** Sends what flow control allows now; the next onReady sends more. */
            @Override
            synchronized void send() {
                try {
                    while (!halfClosed && !result.isDone() && call.isReady() && frames.hasNext()) {
                        Frame frame = frames.next();
                        call.sendMessage(frame);
                        countSent(frame);
                    }
                    if (!halfClosed && !result.isDone() && !frames.hasNext()) {
                        halfClosed = true;
                        call.halfClose();
                    }
                } catch (RuntimeException | Error e) {
                    call.cancel("client failure", e);
                }
            }

            /** The response decodes on a client thread, pulling chunks as they arrive, as the blocking form does. */
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
            start(call, listener, options);
            listener.send();
        } catch (RuntimeException e) {
            call.cancel("client failure", e);
            result.completeExceptionally(e);
        }
        return result;
    }

    private BinaryWriter encode(OperationDescriptor operation, Object request) {
        if (operation.service() != descriptor) {
            throw new IllegalArgumentException(operation + " is not an operation of " + descriptor.name());
        }
        PhaseMarks.mark(PhaseMarks.Phase.ENCODE_START);
        BinaryWriter out = new BinaryWriter(codec, client.settings().maxGraphNodes());
        try {
            codec.writeMessage(out, request);
            PhaseMarks.mark(PhaseMarks.Phase.ENCODE_END);
        } catch (WireFormatException e) {
            throw new RefusedException(e.reason(), e.field(), operation + ": the request cannot be sent: " + e.getMessage(), e);
        }
        return out;
    }

    private ClientCall<Frame, Frame> newCall(OperationDescriptor operation, CallOptions options) {
        Duration timeout = client.settings().timeoutFor(options);
        return channel.newCall(method(operation),
                io.grpc.CallOptions.DEFAULT.withDeadlineAfter(timeout.toNanos(), TimeUnit.NANOSECONDS));
    }

    private static void start(ClientCall<Frame, Frame> call, Listener listener, CallOptions options) {
        Metadata headers = new Metadata();
        if (options.callId() != null) {
            headers.put(GrpcErrors.CALL_ID, options.callId());
        }
        call.start(listener, headers);
        call.request(ChunkQueue.WINDOW);
    }

    /** Sends the request ({@code send}) and reads the response of a started call. */
    private Object exchange(OperationDescriptor operation, ClientCall<Frame, Frame> call, Listener listener,
                            Runnable send) throws DeclaredFault {
        try {
            send.run();
            BinaryReader in = new BinaryReader(codec, listener.queue, limits);
            if (operation.oneWay()) {
                in.expectEnd();
                return null;
            }
            int kind = in.readKind();
            if (kind == WireFormat.DECLARED_FAULT && operation.faultInfoClass() != null) {
                Object info = in.readMessage(operation.faultElement().getLocalPart(), operation.faultInfoClass());
                in.expectEnd();
                throw operation.toException(info);
            }
            if (kind != WireFormat.RESPONSE) {
                throw WireFormatException.malformed("response starts with kind " + kind);
            }
            Object response = in.readMessage(operation.responseElement().getLocalPart(), operation.responseClass());
            in.expectEnd();
            PhaseMarks.mark(PhaseMarks.Phase.DECODE_END);
            return response;
        } catch (WireFormatException e) {
            call.cancel("the client cannot read the response", null);
            throw new TransportException(protocol(), TransportException.Delivery.MAY_HAVE_RUN,
                    "unreadable response to " + operation + " from " + endpoint.address() + ": " + e.getMessage(), e);
        } catch (ChunkQueue.CallInterruptedException e) {
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

    @Override
    public void close() {
        // the GrpcClient owns the channel; a transport holds nothing of its own
    }

    @Override
    public String toString() {
        return "GrpcTransport[" + descriptor.name() + " at " + endpoint.address() + "]";
    }

    /** Receives the response frames and the final status; wakes the calling thread. */
    private class Listener extends ClientCall.Listener<Frame> {
        final ChunkQueue queue;
        private final ClientCall<Frame, Frame> call;
        private final OperationDescriptor operation;
        private volatile SwitchboardException failure;
        private volatile boolean closed;
        private final Object ready = new Object();
        private final WireBytes wire;
        /** Bytes handed to gRPC before the stream existed: on the wire only if the call was not refused. */
        long unconfirmedSent;
        boolean undelivered;

        Listener(ClientCall<Frame, Frame> call, OperationDescriptor operation, Duration timeout, WireBytes wire) {
            this.call = call;
            this.wire = wire;
            this.operation = operation;
            // the deadline ends the call long before this; it only guards against a lost close
            this.queue = new ChunkQueue(call::request, timeout.plusSeconds(30), () -> new TransportException(protocol(),
                    TransportException.Delivery.MAY_HAVE_RUN, operation + ": no answer from " + endpoint.address(), null),
                    limits.maxMessageBytes(), GrpcProtocolProvider.DEFAULT_MAX_CHUNK_BYTES);
        }

        @Override
        public void onMessage(Frame message) {
            if (wire != null && message instanceof Frame.Incoming in) {
                wire.addReceived(in.wireLength());
            }
            PhaseMarks.mark(PhaseMarks.Phase.ARRIVED);
            queue.add(message);
        }

        void countSent(Frame frame) {
            countSent(((Frame.Outgoing) frame).length());
        }

        void countSent(long bytes) {
            if (wire != null && bytes > 0) {
                wire.addSent(bytes);
            }
        }

        @Override
        public void onClose(Status status, Metadata trailers) {
            closed = true;
            if (status.isOk()) {
                queue.end();
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
            synchronized (ready) {
                ready.notifyAll();
            }
        }

        /** The non-blocking form sends from here; the blocking form sends on its own thread. */
        void send() {
        }

        /** Blocks until gRPC takes another frame; fails at once if the call already ended (say, refused). */
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
                        ready.wait(1000);
                    } catch (InterruptedException e) {
                        Thread.currentThread().interrupt();
                        throw new ChunkQueue.CallInterruptedException();
                    }
                }
            }
        }
    }
}
