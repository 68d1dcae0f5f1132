package io.switchboard.metastub;

import java.util.List;

/**
 * SOAP for small messages, the first other protocol the suite offers for large ones; a message's
 * size is its request's payload plus the answer its operation gave lately. The SC2000
 * study measured the crossover near 100 doubles or 10 list nodes, so the default threshold is 800
 * bytes of payload. The size walk stops at the threshold: the decision costs at most that much.
 */
public final class SizePolicy implements SelectionPolicy {
    public static final String NAME = "size";
    public static final long DEFAULT_THRESHOLD = 800;

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
