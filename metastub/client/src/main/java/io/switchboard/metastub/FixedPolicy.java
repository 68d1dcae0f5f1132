package io.switchboard.metastub;

import java.util.List;
import java.util.Objects;

/**
 * Always one protocol; a call whose server does not speak it is refused. While the protocol is in
 * back-off after a failure, calls go over SOAP, the failsafe.
 */
public final class FixedPolicy implements SelectionPolicy {
    private final String protocol;

    public FixedPolicy(String protocol) {
        this.protocol = Objects.requireNonNull(protocol);
    }

    /** The protocol this policy always picks. */
    public String protocol() {
        return protocol;
    }

    @Override
    public String name() {
        return "fixed:" + protocol;
    }

    @Override
    public String select(CallContext call, List<String> candidates) {
        if (!candidates.contains(protocol)) {
            if (call.suite().candidates().contains(protocol)) {
                return ProtocolSuite.FAILSAFE;
            }
            throw new NoCommonProtocolException(protocol + " is the fixed protocol but not among the candidates "
                    + candidates);
        }
        return protocol;
    }
}
