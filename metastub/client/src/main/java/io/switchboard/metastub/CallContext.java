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
    private boolean exact;
    private long expectedResponseBytes;

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

    /**
     * The response payload this operation has answered with lately (0 before its first answer):
     * a call with a small request and a large answer ({@code result()} of a matrix worker) is a
     * bulk call all the same.
     */
    public long expectedResponseBytes() {
        return expectedResponseBytes;
    }

    CallContext expectingResponse(long bytes) {
        this.expectedResponseBytes = bytes;
        return this;
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
        if (estimate >= 0 && (exact || estimateCap >= cap)) {
            return estimate;
        }
        long w = sizes.walkRequest(request, operation, cap);
        exact = w >= 0;
        estimate = exact ? w : ~w;
        estimateCap = cap;
        return estimate;
    }

    /**
     * Whether the estimate counted the whole message; false when the walk stopped at its cap (the
     * message is at least that large) or no estimate was made.
     */
    public boolean estimateIsExact() {
        return estimate >= 0 && exact;
    }

    /** Whether some policy has estimated this call's payload already (exactly or up to its cap). */
    boolean estimated() {
        return estimate >= 0;
    }

    /** The estimate if it counted the whole message, else -1: what call records carry, and policies learn from. */
    long knownEstimate() {
        return estimateIsExact() ? estimate : -1;
    }
}
