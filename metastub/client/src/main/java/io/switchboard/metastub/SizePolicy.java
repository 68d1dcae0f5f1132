package io.switchboard.metastub;

import java.util.List;

/**
 * The small-call protocol, {@code tcp}, for every call it is offered for, the bulk protocol for
 * the rest; without tcp, SOAP for small messages and the first other protocol the suite offers for
 * large ones. A message's size is its request's payload plus the answer its operation gave lately.
 *
 * <p>tcp is offered only for calls up to its policy size (2 MiB of payload by default,
 * {@code ProtocolProvider.policyMaxBytes}): on the same bench tcp's small call costs a fraction of
 * gRPC's, and it stays faster up to its 4 MiB frame limit (docs/tcp-wire.md); larger messages go
 * to gRPC, which streams them in parts beside other calls. Without tcp, the threshold decides:
 * the SC2000 study measured the crossover between SOAP and a binary protocol near 100 doubles or
 * 10 list nodes, so the default is 800 bytes of payload. The size walk stops at the threshold:
 * the decision costs at most that much.
 */
public final class SizePolicy implements SelectionPolicy {
    public static final String NAME = "size";
    public static final long DEFAULT_THRESHOLD = 800;
    /** The protocol for small calls, when the suite offers it for this call. */
    public static final String SMALL_CALLS = "tcp";

    private final long threshold;

    public SizePolicy() {
        this(DEFAULT_THRESHOLD);
    }

    public SizePolicy(long thresholdBytes) {
        if (thresholdBytes < 0) {
            throw new IllegalArgumentException("threshold must not be negative");
        }
        this.threshold = thresholdBytes;
    }

    @Override
    public String name() {
        return threshold == DEFAULT_THRESHOLD ? NAME : NAME + ":" + threshold;
    }

    @Override
    public boolean usesResponseSizes() {
        return true;
    }

    @Override
    public String select(CallContext call, List<String> candidates) {
        if (candidates.contains(SMALL_CALLS)) {
            return SMALL_CALLS;
        }
        if (candidates.size() == 1 || call.estimatedBytes(threshold) + call.expectedResponseBytes() <= threshold) {
            return ProtocolSuite.FAILSAFE;
        }
        for (String p : candidates) {
            if (!ProtocolSuite.FAILSAFE.equals(p)) {
                return p;
            }
        }
        return ProtocolSuite.FAILSAFE;
    }
}
