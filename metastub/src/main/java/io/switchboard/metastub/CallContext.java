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
        estimate = sizes.estimate(request, operation.model().request(), cap);
        estimateCap = cap;
        return estimate;
    }

    /** The estimate already computed, or -1 if no policy asked for one. */
    long knownEstimate() {
        return estimate;
    }
}
