package io.switchboard.protocol.local;

import io.switchboard.idl.runtime.DeclaredFault;
import io.switchboard.idl.runtime.OperationDescriptor;
import io.switchboard.idl.runtime.ServiceDescriptor;
import io.switchboard.codec.message.MessageChecks;
import io.switchboard.codec.message.NodeTable;
import io.switchboard.codec.message.WireFormatException;
import io.switchboard.codec.proto.ProtoCodec;
import io.switchboard.protocol.CallOptions;
import io.switchboard.protocol.Endpoint;
import io.switchboard.protocol.Peer;
import io.switchboard.protocol.RefusedException;
import io.switchboard.protocol.RemoteInvocationException;
import io.switchboard.protocol.ServerCallContext;
import io.switchboard.protocol.Skeleton;
import io.switchboard.protocol.TraceContext;
import io.switchboard.protocol.spi.Transport;
import io.switchboard.protocol.TransportException;
import io.switchboard.protocol.WireBytes;

/**
 * A call to a skeleton in this JVM, on the caller's thread. The skeleton is looked up on every
 * call, so an unexported component is refused at once ({@code NOT_DELIVERED}); see
 * {@link LocalProtocolProvider} for when objects are copied and when shared.
 */
final class LocalTransport implements Transport {
    private final LocalClient client;
    private final ServiceDescriptor descriptor;
    private final Endpoint endpoint;
    private final boolean thisJvm;

    LocalTransport(LocalClient client, ServiceDescriptor descriptor, Endpoint endpoint) {
        this.client = client;
        this.descriptor = descriptor;
        this.endpoint = endpoint;
        this.thisJvm = LocalProtocolProvider.isLocal(endpoint);
        if (descriptor.codec(ProtoCodec.class) == null || descriptor.codec(MessageChecks.class) == null) {
            throw new IllegalArgumentException(descriptor.name() + " has no protobuf codec or message checks: recompile it"
                    + " with this Switchboard");
        }
    }

    @Override
    public String protocol() {
        return LocalProtocolProvider.NAME;
    }

    @Override
    public Endpoint endpoint() {
        return endpoint;
    }

    @Override
    public Object call(OperationDescriptor operation, Object request, CallOptions options) throws DeclaredFault {
        return call(operation, request, options, context(options, client.callerName()));
    }

    /**
     * The blocking call on the shared pool ({@link AsyncCalls#onPool}); cancelling the future
     * cancels the component's call: its thread is interrupted, {@code ServerCallContext.isCancelled()}
     * turns true and the calls it has under way are cancelled in turn.
     */
    @Override
    public java.util.concurrent.CompletableFuture<Object> callAsync(OperationDescriptor operation, Object request,
                                                                   CallOptions options) {
        ServerCallContext context = context(options, client.callerName());
        java.util.concurrent.CompletableFuture<Object> result = io.switchboard.protocol.AsyncCalls.onPool(
                (op, req, opts) -> call(op, req, opts, context), operation, request, options);
        result.whenComplete((r, t) -> {
            if (result.isCancelled()) {
                context.cancel();
            }
        });
        return result;
    }

    /**
     * The component's side of a call: the caller's deadline as is (the same clock), else its
     * timeout from now; cancelled when it passes.
     */
    private static ServerCallContext context(CallOptions options, String clientCaller) {
        Long deadline = options.deadlineNanoTime();
        Long fromTimeout = ServerCallContext.deadlineAfter(options.timeout());
        if (deadline == null || (fromTimeout != null && fromTimeout - deadline < 0)) {
            deadline = fromTimeout;
        }
        return ServerCallContext.create(deadline, options.get(TraceContext.OPTION), caller(options, clientCaller));
    }

    /** The caller as it named itself ({@link LocalProtocolProvider#CALLER}): a peer in this process. */
    static Peer caller(CallOptions options) {
        return caller(options, null);
    }

    /**
     * The caller as the call names it, else as its client does ({@code clientCaller}, from the
     * client's settings; null: none), else {@link LocalProtocolProvider#DEFAULT_CALLER}.
     */
    static Peer caller(CallOptions options, String clientCaller) {
        String name = options.get(LocalProtocolProvider.CALLER);
        if (name == null || name.isBlank()) {
            name = clientCaller == null || clientCaller.isBlank() ? LocalProtocolProvider.DEFAULT_CALLER : clientCaller;
        }
        return Peer.of(name, Peer.Authentication.IN_PROCESS, null);
    }

    private Object call(OperationDescriptor operation, Object request, CallOptions options, ServerCallContext context)
            throws DeclaredFault {
        if (operation.service() != descriptor) {
            throw new IllegalArgumentException(operation + " is not an operation of " + descriptor.name());
        }
        if (!thisJvm) {
            throw notDelivered("the endpoint belongs to another JVM (or class loader): " + endpoint.address()
                    + " is not served by this one (" + LocalProtocolProvider.jvmId() + ")");
        }
        if (client.closed()) {
            throw notDelivered("the local client is closed");
        }
        Skeleton skeleton = LocalExports.get(endpoint.address());
        if (skeleton == null) {
            throw notDelivered("nothing is exported at " + endpoint.address());
        }
        ServiceDescriptor served = skeleton.descriptor();
        if (!served.name().equals(descriptor.name()) || !served.hasOperation(operation.name())) {
            throw notDelivered(endpoint.address() + " serves " + served.name() + ", which has no operation "
                    + operation.name());
        }
        // the same generated classes on both sides: objects can be shared; otherwise (two class
        // loaders' copies of one interface) they are always copied, from one codec to the other
        boolean sameClasses = served == descriptor;
        boolean share = sameClasses && operation.byReference();
        OperationDescriptor target = sameClasses ? operation : served.operation(operation.name());
        ProtoCodec callerCodec = descriptor.codec(ProtoCodec.class);
        ProtoCodec componentCodec = served.codec(ProtoCodec.class);

        Object in;
        try {
            WireBytes wire = options.wireBytes();
            if (share && wire != null) {
                wire.addSent(0);   // shared, not copied: nothing went through an encoding
            }
            in = share ? request : copy(descriptor, callerCodec, request, componentCodec,
                    target.requestElement().getLocalPart(), wire == null ? null : wire::addSent);
        } catch (WireFormatException e) {
            throw new RefusedException(e.reason(), e.field(), operation + ": the request cannot be sent: " + e.getMessage(), e);
        } catch (IllegalArgumentException | IllegalStateException e) {
            throw new RefusedException(WireFormatException.MALFORMED, operation + ": the request cannot be sent: "
                    + e.getMessage(), e);
        }

        if (context.expired()) {
            throw new io.switchboard.protocol.DeadlineExceededException(protocol(),
                    TransportException.Delivery.NOT_DELIVERED, "the deadline passed before " + operation
                    + " could start; it did not run", null);
        }
        Object out;
        context.cancelAtDeadline();
        try (ServerCallContext.Scope scope = context.enter()) {
            out = skeleton.invoke(target, in, options.callId());
        } catch (DeclaredFault fault) {
            Object info = fault.faultInfo();
            if (!share) {
                info = copyBack(served, componentCodec, info, callerCodec, operation.faultElement().getLocalPart(),
                        operation, options.wireBytes());
            }
            throw operation.toException(info);
        } catch (io.switchboard.protocol.DrainingException e) {
            throw e;   // refused before it ran: another replica may take it
        } catch (io.switchboard.protocol.PermissionDeniedException e) {
            throw e;   // refused because of who called: the caller gets the refusal itself
        } catch (RefusedException e) {
            throw e;   // a step of the component's chain refused it before it ran (a reused call id, say)
        } catch (RuntimeException e) {
            throw new RemoteInvocationException(e.getMessage() != null ? e.getMessage() : e.toString(),
                    e.getClass().getName(), e);
        }
        if (context.expired()) {
            // past its deadline a call fails, as over the network protocols, even when the operation returned
            throw new io.switchboard.protocol.DeadlineExceededException(protocol(), TransportException.Delivery.MAY_HAVE_RUN,
                    "the deadline passed while " + operation + " ran; its result is dropped", null);
        }
        if (operation.oneWay() || out == null || share) {
            if (share && !operation.oneWay() && options.wireBytes() != null) {
                options.wireBytes().addReceived(0);
            }
            return operation.oneWay() ? null : out;
        }
        return copyBack(served, componentCodec, out, callerCodec, operation.responseElement().getLocalPart(),
                operation, options.wireBytes());
    }

    /**
     * A copy of a message the sender's {@code descriptor} describes, after the checks every protocol
     * makes before sending: a value no protocol may carry is refused here as over a network.
     */
    private static Object copy(ServiceDescriptor descriptor, ProtoCodec from, Object message, ProtoCodec to,
                               String element, java.util.function.LongConsumer copied) {
        NodeTable nodes = MessageChecks.of(descriptor).check(message, Integer.MAX_VALUE);   // no node limit in process
        return NodeTable.during(nodes, () -> MessageCopy.copy(from, message, to, element, copied));
    }

    /** A response or fault the component gave that cannot be copied: the operation ran, the answer is lost. */
    private static Object copyBack(ServiceDescriptor served, ProtoCodec from, Object message, ProtoCodec to,
                                   String element, OperationDescriptor operation, WireBytes wire) {
        try {
            return copy(served, from, message, to, element, wire == null ? null : wire::addReceived);
        } catch (WireFormatException | IllegalArgumentException | IllegalStateException e) {
            throw new RemoteInvocationException("the response of " + operation + " cannot be sent: " + e.getMessage(),
                    e.getClass().getName(), e);
        }
    }

    private TransportException notDelivered(String message) {
        return new TransportException(protocol(), TransportException.Delivery.NOT_DELIVERED, message, null);
    }

    @Override
    public void close() {
        // nothing held: the component stays exported, other transports keep calling it
    }

    @Override
    public String toString() {
        return "LocalTransport[" + endpoint.address() + "]";
    }
}
