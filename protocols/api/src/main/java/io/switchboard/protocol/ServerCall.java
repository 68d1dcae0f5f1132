package io.switchboard.protocol;

import io.switchboard.idl.runtime.OperationDescriptor;
import io.switchboard.idl.runtime.ServiceDescriptor;
import java.util.Objects;

/**
 * One call as {@link ServerInterceptor}s see it, the one object a call allocates for its way down
 * a {@link ServerInterceptorChain}: which component and operation, the decoded request, the
 * protocol it arrived over and its call id. What the protocol set around the call (the caller's
 * trace context and deadline, whether the caller cancelled) is read through {@link ServerCallContext},
 * here too. Immutable. API.
 *
 * <pre>{@code
 * ServerInterceptor log = (call, next) -> {
 *     LOG.info("{} over {} (call id {})", call, call.protocol(), call.callId());
 *     return next.proceed(call);
 * };
 * }</pre>
 */
public final class ServerCall {
    private final String component;
    private final ServiceDescriptor descriptor;
    private final String protocol;
    private final OperationDescriptor operation;
    private final Object request;
    private final String callId;

    /**
     * @param component the name the component is served under (its interface name unless exported under another)
     * @param protocol  the protocol the call arrived over; null when not known (a skeleton exported as is)
     * @param request   the decoded request; null for a refused call
     * @param callId    the call id the client sent; null when it sent none
     */
    public ServerCall(String component, ServiceDescriptor descriptor, String protocol, OperationDescriptor operation,
                      Object request, String callId) {
        this.component = component;
        this.descriptor = Objects.requireNonNull(descriptor, "descriptor");
        this.protocol = protocol;
        this.operation = Objects.requireNonNull(operation, "operation");
        this.request = request;
        this.callId = callId;
    }

    /** The name the component is served under. */
    public String component() {
        return component;
    }

    /** The component's interface. */
    public ServiceDescriptor descriptor() {
        return descriptor;
    }

    /** The protocol the call arrived over ({@code soap}, {@code grpc}, {@code local}, ...), or null when not known. */
    public String protocol() {
        return protocol;
    }

    public OperationDescriptor operation() {
        return operation;
    }

    /** The decoded request message; null for a refused call. */
    public Object request() {
        return request;
    }

    /** The call id the client sent (the same on each of its repeats), or null. */
    public String callId() {
        return callId;
    }

    /** The W3C trace context the call arrived with, or null ({@link ServerCallContext#trace()}). */
    public TraceContext trace() {
        return ServerCallContext.trace();
    }

    /** Who made the call ({@link ServerCallContext#peer()}): its principal, how it was established, its address. */
    public Peer peer() {
        return ServerCallContext.peer();
    }

    /** When the call must end, as its caller set it; null without a deadline ({@link ServerCallContext#deadline()}). */
    public java.time.Instant deadline() {
        return ServerCallContext.deadline();
    }

    /** Whether the caller has cancelled the call ({@link ServerCallContext#isCancelled()}). */
    public boolean cancelled() {
        return ServerCallContext.isCancelled();
    }

    @Override
    public String toString() {
        return "ServerCall[" + component + "." + operation.name() + ", " + protocol + "]";
    }
}
