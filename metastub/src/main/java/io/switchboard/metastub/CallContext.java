package io.switchboard.metastub;

import io.switchboard.idl.runtime.OperationDescriptor;

/**
 * One call as a selection policy sees it: the operation, the request message, the protocol suite,
 * and a lazily computed, capped estimate of the payload size (computed at most once per call).
 */
public final class CallContext {
    private final OperationDescriptor operation;
    private final Object request;
    private final ProtocolSuite suite;
    private final MessageSize sizes;
    private long estimate = -1;
    private long estimateCap = -1;

    CallContext(OperationDescriptor operation, Object request, ProtocolSuite suite, MessageSize sizes) {
        this.operation = operation;
        this.request = request;
        this.suite = suite;
        this.sizes = sizes;
    }

    /**
     * A call as a policy would see it inside a meta-stub, for tools and benchmarks that ask a
     * policy directly, without a meta-stub or a network. Share one {@link MessageSize} per
     * interface: it caches the getters it looks up.
     *
     * <pre>{@code
     * MessageSize sizes = new MessageSize(EchoComponent.DESCRIPTOR.model());
     * CallContext call = CallContext.of(EchoComponent.DESCRIPTOR.operation("echoDoubles"), request, suite, sizes);
     * String protocol = new SizePolicy().select(call, suite.candidates());
     * }</pre>
     */
    public static CallContext of(OperationDescriptor operation, Object request, ProtocolSuite suite, MessageSize sizes) {
        return new CallContext(java.util.Objects.requireNonNull(operation, "operation"), request,
                java.util.Objects.requireNonNull(suite, "suite"), java.util.Objects.requireNonNull(sizes, "sizes"));
    }

    public OperationDescriptor operation() {
        return operation;
    }

    public Object request() {
        return request;
    }

    public ProtocolSuite suite() {
        return suite;
    }

    /**
     * The request's payload in bytes, or some value above {@code cap} when it is larger; the walk
     * over the message stops there, so the cost is bounded by the cap.
     */
    public long estimatedBytes(long cap) {
        if (estimate >= 0 && (estimate <= estimateCap || estimateCap >= cap)) {
            return estimate;
        }
        estimate = sizes.estimateRequest(request, operation, cap);
        estimateCap = cap;
        return estimate;
    }

    /** The estimate already computed, or -1 if no policy asked for one. */
    long knownEstimate() {
        return estimate;
    }
}
