package io.switchboard.metastub;

import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.function.LongSupplier;

/**
 * Which protocols a meta-stub avoids for now: a protocol that failed is left out of the
 * candidates for a back-off period (doubling with each failure in a row, up to a maximum), then
 * tried again by the next call that selects it. A success ends the back-off. SOAP is never left
 * out: it is the failsafe. The back-off is a {@link Backoff}, as a replicated channel's.
 */
final class ProtocolHealth {
    private final Backoff backoff;
    private final Map<String, State> states = new ConcurrentHashMap<>();
    private volatile boolean anyAvoided;

    private record State(int failures, long avoidUntil) {
    }

    ProtocolHealth(Duration initial, Duration max, LongSupplier nanoClock) {
        this.backoff = new Backoff(initial, max, nanoClock);
    }

    /** The candidates without those in back-off; the same list when none is. */
    List<String> filter(List<String> candidates) {
        if (!anyAvoided) {
            return candidates;
        }
        long now = backoff.now();
        List<String> out = new java.util.ArrayList<>(candidates.size());
        boolean stillAvoiding = false;
        for (String p : candidates) {
            State s = states.get(p);
            if (s == null || ProtocolSuite.FAILSAFE.equals(p) || !Backoff.before(now, s.avoidUntil())) {
                out.add(p);
            } else {
                stillAvoiding = true;
            }
        }
        if (!stillAvoiding && states.values().stream().allMatch(s -> !Backoff.before(now, s.avoidUntil()))) {
            anyAvoided = false;
        }
        return out;
    }

    void failed(String protocol) {
        if (ProtocolSuite.FAILSAFE.equals(protocol)) {
            return;
        }
        states.compute(protocol, (p, s) -> {
            int failures = s == null ? 1 : s.failures() + 1;
            return new State(failures, backoff.until(failures));
        });
        anyAvoided = true;
    }

    void succeeded(String protocol) {
        if (!states.isEmpty()) {
            states.remove(protocol);
        }
    }

    /** "grpc in back-off" and the like, for call records. */
    String describeAvoided() {
        List<String> avoided = states.keySet().stream().filter(this::avoided).sorted().toList();
        return String.join(", ", avoided) + " in back-off";
    }

    /** Whether {@code protocol} is in back-off now. */
    boolean avoided(String protocol) {
        State s = states.get(protocol);
        return s != null && backoff.before(s.avoidUntil());
    }
}
