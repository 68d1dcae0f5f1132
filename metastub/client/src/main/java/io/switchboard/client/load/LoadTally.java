package io.switchboard.client.load;

import io.switchboard.idl.runtime.DeclaredFault;
import io.switchboard.metastub.CallListener;
import io.switchboard.metastub.CallRecord;
import io.switchboard.protocol.TransportException;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.LongAdder;
import java.util.function.BiConsumer;

/**
 * What a load's callers did, counted without locks: calls, failures by kind, the protocol that
 * answered, fallbacks, failovers and latencies. The attempts come from the client's
 * {@link CallListener} (give the tally to {@code Switchboard.Builder#listener}), the calls from
 * {@link LoadRun}.
 *
 * <pre>{@code
 * LoadTally tally = new LoadTally((kind, e) -> System.err.println("failed " + kind + ": " + e.getMessage()));
 * Switchboard sb = Switchboard.builder(registryUrl).listener(tally).connect();
 * }</pre>
 */
public final class LoadTally implements CallListener {
    private final LongAdder calls = new LongAdder();
    private final LongAdder failed = new LongAdder();
    private final Map<String, LongAdder> failures = new ConcurrentHashMap<>();
    private final Map<String, LongAdder> protocols = new ConcurrentHashMap<>();
    private final LongAdder fallbacks = new LongAdder();
    private final LongAdder failovers = new LongAdder();
    private final LatencyHistogram latency = new LatencyHistogram();
    private final BiConsumer<String, Exception> firstOfKind;

    /** A tally that says nothing of failures but counts them. */
    public LoadTally() {
        this((kind, e) -> { });
    }

    /** @param firstOfKind told the first failure of each kind, whole, for its reason; the rest are only counted */
    public LoadTally(BiConsumer<String, Exception> firstOfKind) {
        this.firstOfKind = firstOfKind;
    }

    /** Makes one call and counts it, with its latency and, when it throws, its kind of failure. */
    public void call(LoadRun.Call call) {
        long t0 = System.nanoTime();
        Exception cause = null;
        try {
            call.run();
        } catch (Exception e) {
            cause = e;
        }
        latency.record(System.nanoTime() - t0);
        calls.increment();
        if (cause != null) {
            failed(kind(cause), cause);
        }
    }

    private void failed(String kind, Exception cause) {
        failed.increment();
        boolean[] first = {false};
        failures.computeIfAbsent(kind, k -> {
            first[0] = true;
            return new LongAdder();
        }).increment();
        if (first[0]) {
            firstOfKind.accept(kind, cause);
        }
    }

    /** The kind a failure is counted under: a declared fault, a transport's failure and whether it may have run, else the class. */
    static String kind(Exception e) {
        if (e instanceof DeclaredFault) {
            return "declared-fault";
        }
        if (e.getClass() == TransportException.class) {
            TransportException t = (TransportException) e;
            return "TransportException" + (t.delivery() == TransportException.Delivery.NOT_DELIVERED
                    ? " (not delivered)" : " (may have run)");
        }
        return e.getClass().getSimpleName();
    }

    /** Every attempt's record: the protocol that answered, fallbacks, failovers. */
    @Override
    public void onCall(CallRecord r) {
        if (r.succeeded()) {
            protocols.computeIfAbsent(r.protocol(), k -> new LongAdder()).increment();
        }
        if (r.fallback()) {
            fallbacks.increment();
        }
        if (r.reason() != null && r.reason().startsWith("another replica")) {
            failovers.increment();
        }
    }

    public long calls() {
        return calls.sum();
    }

    public long failed() {
        return failed.sum();
    }

    /** Failed calls by kind, sorted by kind. */
    public Map<String, Long> failures() {
        return sums(failures);
    }

    /** Answered attempts by the protocol that answered, sorted by protocol. */
    public Map<String, Long> protocols() {
        return sums(protocols);
    }

    public long fallbacks() {
        return fallbacks.sum();
    }

    public long failovers() {
        return failovers.sum();
    }

    public LatencyHistogram latency() {
        return latency;
    }

    private static Map<String, Long> sums(Map<String, LongAdder> counters) {
        Map<String, Long> sorted = new TreeMap<>();
        counters.forEach((k, v) -> sorted.put(k, v.sum()));
        return sorted;
    }
}
