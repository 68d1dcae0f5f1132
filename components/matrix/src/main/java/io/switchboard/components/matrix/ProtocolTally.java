package io.switchboard.components.matrix;

import io.switchboard.metastub.CallListener;
import io.switchboard.metastub.CallRecord;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.LongAdder;

/**
 * Counts the calls a meta-stub made, by operation and by the protocol that carried each attempt;
 * how the per-call choice came out. A call the failsafe repeated over SOAP counts on both.
 *
 * <pre>{@code
 * ProtocolTally tally = new ProtocolTally();
 * try (Switchboard sb = Switchboard.builder(registryUrl).listener(tally).connect()) {
 *     ...
 * }
 * System.out.println(tally.byOperation());   // {result={grpc=4}, status={soap=4}, ...}
 * }</pre>
 */
public final class ProtocolTally implements CallListener {
    private final Map<String, Map<String, LongAdder>> counts = new ConcurrentHashMap<>();

    @Override
    public void onCall(CallRecord record) {
        counts.computeIfAbsent(record.operation(), o -> new ConcurrentHashMap<>())
                .computeIfAbsent(record.protocol(), p -> new LongAdder()).increment();
    }

    /** Adds counts seen elsewhere (a worker's report of its own calls). */
    public void add(String operation, String protocol, long calls) {
        counts.computeIfAbsent(operation, o -> new ConcurrentHashMap<>())
                .computeIfAbsent(protocol, p -> new LongAdder()).add(calls);
    }

    /** operation → protocol → calls, sorted by name. */
    public Map<String, Map<String, Long>> byOperation() {
        Map<String, Map<String, Long>> out = new TreeMap<>();
        counts.forEach((op, m) -> {
            Map<String, Long> inner = new TreeMap<>();
            m.forEach((p, n) -> inner.put(p, n.sum()));
            out.put(op, inner);
        });
        return out;
    }

    /** Calls of {@code operation} over {@code protocol}. */
    public long calls(String operation, String protocol) {
        Map<String, LongAdder> m = counts.get(operation);
        LongAdder n = m == null ? null : m.get(protocol);
        return n == null ? 0 : n.sum();
    }

    /** Calls of {@code operation} over any protocol. */
    public long calls(String operation) {
        Map<String, LongAdder> m = counts.get(operation);
        return m == null ? 0 : m.values().stream().mapToLong(LongAdder::sum).sum();
    }

    public void reset() {
        counts.clear();
    }

    @Override
    public String toString() {
        return byOperation().toString();
    }
}
