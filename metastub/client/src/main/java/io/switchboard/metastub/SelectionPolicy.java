package io.switchboard.metastub;

import java.util.List;

/**
 * Chooses the protocol of one call among the candidates (the protocols client and server share,
 * in the client's order, without those in back-off; SOAP is always among them). Implementations
 * are small, thread-safe and fast: they run on every call.
 *
 * <pre>{@code
 * SelectionPolicy p = Policies.byName("size:4096");
 * String protocol = p.select(call, List.of("grpc", "soap"));
 * }</pre>
 */
public interface SelectionPolicy {
    /** The name that selects this policy in configuration: {@code first-common}, {@code fixed:grpc}, ... */
    String name();

    /** The chosen protocol, one of {@code candidates}. */
    String select(CallContext call, List<String> candidates);

    /** Told of every attempt the meta-stub made, to learn from; most policies ignore it. */
    default void observe(CallRecord record) {
    }

    /**
     * A policy that learns from payload sizes returns how far the meta-stub should estimate the
     * payload of calls it did not choose itself (pinned ones), so that they teach it too; -1 for none.
     */
    default long learningEstimateCap() {
        return -1;
    }

    /** Whether the policy looks at {@link CallContext#expectedResponseBytes()}, so that responses are counted. */
    default boolean usesResponseSizes() {
        return learningEstimateCap() > 0;
    }
}
