package io.switchboard.server;

import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.Timer;
import io.micrometer.core.instrument.distribution.HistogramSnapshot;
import io.micrometer.core.instrument.distribution.ValueAtPercentile;
import io.switchboard.protocol.ServerInterceptorChain;
import io.switchboard.protocol.Skeleton;
import io.switchboard.protocol.spi.DeduplicatingInterceptor;
import io.switchboard.protocol.spi.DeduplicatingSkeleton;
import io.switchboard.registry.CallSummary;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;

/**
 * What a component server's operations served, per component, operation and protocol: calls by
 * outcome, refusals and latency percentiles, kept in Micrometer meters (bounded: one timer per
 * outcome that occurred, each a fixed-size time-window histogram). {@link ComponentServer} feeds
 * it from a {@code CallStatsInterceptor} in each component's server chain, and sends {@link
 * #summary} with every lease renewal; the same meters are what {@code /metrics} shows.
 *
 * <p>Meters (Micrometer names; Prometheus shows {@code switchboard_server_calls_seconds_count} and so on):
 * <ul>
 * <li>{@value #CALLS}, a timer tagged {@code component}, {@code operation}, {@code protocol} and
 *     {@code outcome}: {@code ok}, {@code fault} (the declared fault), {@code error} (anything
 *     else), {@code repeat} (a call id seen before: answered with the first outcome, not run again),
 *     with the 50th, 90th and 99th percentiles of the last two minutes;</li>
 * <li>{@value #REFUSALS}, a counter tagged {@code component}, {@code operation}, {@code protocol}
 *     and {@code reason}: requests the protocol refused before the operation ran.</li>
 * </ul>
 *
 * <p>What the server cannot know: a client's fallback that never reached it (the fast protocol's
 * connection failed) arrives as an ordinary SOAP call; a fallback after a failure mid-call repeats
 * the call id and is counted as a {@code repeat}, but only for operations not marked idempotent
 * (the others are not remembered, so they simply run again). The meta-stub's own records
 * ({@code MicrometerCallListener}, client side) count every fallback.
 *
 * <p>The seam is {@link #record} and {@link #refused}, which that interceptor calls;
 * {@link #counting} puts one in front of a skeleton exported without a {@code ComponentServer}.
 */
public final class ServerCallStats {
    /** The timer of calls that reached an operation. */
    public static final String CALLS = "switchboard.server.calls";
    /** The counter of requests refused before the operation ran. */
    public static final String REFUSALS = "switchboard.server.refusals";
    /** The counter of calls the authorization policy denied, tagged {@code identity} and {@code path}. */
    public static final String DENIALS = "switchboard.server.denials";
    /** At most this many (component, operation, protocol) rows are kept; more are not counted. */
    static final int MAX_ROWS = 1024;
    private static final Duration WINDOW = Duration.ofMinutes(2);

    /** How a call that reached the operation ended. */
    public enum Outcome {
        OK, FAULT, ERROR, REPEAT;

        final String tag = name().toLowerCase(java.util.Locale.ROOT);
    }

    private record Key(String component, String operation, String protocol) {
    }

    private final class Row {
        final Key key;
        final java.util.concurrent.atomic.AtomicReferenceArray<Timer> timers =
                new java.util.concurrent.atomic.AtomicReferenceArray<>(Outcome.values().length);
        final Map<String, Counter> refusals = new ConcurrentHashMap<>();

        Row(Key key) {
            this.key = key;
        }

        Timer timer(Outcome o) {
            Timer t = timers.get(o.ordinal());
            if (t == null) {
                t = Timer.builder(CALLS).description("calls that reached a component's operation, by outcome")
                        .tag("component", key.component).tag("operation", key.operation)
                        .tag("protocol", key.protocol).tag("outcome", o.tag)
                        .publishPercentiles(0.5, 0.9, 0.99).percentilePrecision(2)
                        .distributionStatisticExpiry(WINDOW).distributionStatisticBufferLength(3)
                        .register(meters);
                timers.set(o.ordinal(), t);   // the registry hands back the same timer to a racing thread
            }
            return t;
        }

        Counter refusals(String reason) {
            return refusals.computeIfAbsent(reason, r -> Counter.builder(REFUSALS)
                    .description("requests refused before the operation ran").tag("component", key.component)
                    .tag("operation", key.operation).tag("protocol", key.protocol).tag("reason", r)
                    .register(meters));
        }

        long count(Outcome o) {
            Timer t = timers.get(o.ordinal());
            return t == null ? 0 : t.count();
        }
    }

    private record DenialKey(String identity, String path, String protocol) {
    }

    private final MeterRegistry meters;
    private final Map<Key, Row> rows = new ConcurrentHashMap<>();
    /** Bounded as the rows: an attacker cycling identities or paths cannot grow it without end. */
    private final Map<DenialKey, Counter> denials = new ConcurrentHashMap<>();
    private final long startedNanos = System.nanoTime();

    public ServerCallStats(MeterRegistry meters) {
        this.meters = Objects.requireNonNull(meters);
    }

    public MeterRegistry meters() {
        return meters;
    }

    private Row row(String component, String operation, String protocol) {
        Key k = new Key(component, operation, protocol);
        Row r = rows.get(k);
        if (r == null) {
            if (rows.size() >= MAX_ROWS) {
                return null;
            }
            r = rows.computeIfAbsent(k, Row::new);
        }
        return r;
    }

    /** One call that reached {@code operation} over {@code protocol} and took {@code nanos}. */
    public void record(String component, String operation, String protocol, Outcome outcome, long nanos) {
        Row r = row(component, operation, protocol);
        if (r != null) {
            r.timer(outcome).record(nanos, TimeUnit.NANOSECONDS);
        }
    }

    /** One request for {@code operation} that {@code protocol} refused before it ran, for {@code reason}. */
    public void refused(String component, String operation, String protocol, String reason) {
        Row r = row(component, operation, protocol);
        if (r != null) {
            r.refusals(reason == null ? "unknown" : reason).increment();
        }
    }

    /**
     * One call the authorization policy denied: {@code identity} ({@code Peer.identity()}) on
     * {@code path} over {@code protocol}. At most {@link #MAX_ROWS} identities, paths and
     * protocols are counted; more are not.
     */
    public void denied(String identity, String path, String protocol) {
        DenialKey k = new DenialKey(identity, path, protocol == null ? "unknown" : protocol);
        Counter c = denials.get(k);
        if (c == null) {
            if (denials.size() >= MAX_ROWS) {
                return;
            }
            c = denials.computeIfAbsent(k, key -> Counter.builder(DENIALS)
                    .description("calls the authorization policy denied, per identity and path")
                    .tag("identity", key.identity).tag("path", key.path).tag("protocol", key.protocol)
                    .register(meters));
        }
        c.increment();
    }

    /** Calls denied so far, per identity and path (all protocols together), the most denied first. */
    public List<Denial> denials() {
        Map<String, Denial> byKey = new java.util.HashMap<>();
        denials.forEach((k, c) -> byKey.merge(k.identity + "\u0000" + k.path, new Denial(k.identity, k.path,
                (long) c.count()), (a, b) -> new Denial(a.identity(), a.path(), a.count() + b.count())));
        List<Denial> out = new ArrayList<>(byKey.values());
        out.sort(java.util.Comparator.comparingLong(Denial::count).reversed().thenComparing(Denial::identity)
                .thenComparing(Denial::path));
        return out;
    }

    /** How often the policy denied {@code identity} the call {@code path}. */
    public record Denial(String identity, String path, long count) {
    }

    /**
     * {@code skeleton} counted here as {@code component} on {@code protocol}: a chain of one
     * counting step, which counts repeats when {@code skeleton} is a {@link DeduplicatingSkeleton}.
     */
    public Skeleton counting(Skeleton skeleton, String component, String protocol) {
        DeduplicatingInterceptor dedup = skeleton instanceof DeduplicatingSkeleton d ? d.interceptor() : null;
        return ServerInterceptorChain.of(component, protocol, List.of(new CallStatsInterceptor(this, dedup)), skeleton);
    }

    /**
     * The figures of one component: one row per operation and protocol that served or refused a
     * call, at most {@link CallSummary#MAX_ROWS} (the busiest first when there are more).
     */
    public CallSummary summary(String component) {
        List<CallSummary.Row> out = new ArrayList<>();
        for (Row r : rows.values()) {
            if (!r.key.component.equals(component)) {
                continue;
            }
            long ok = r.count(Outcome.OK);
            long faults = r.count(Outcome.FAULT);
            long errors = r.count(Outcome.ERROR);
            long repeats = r.count(Outcome.REPEAT);
            long refusals = 0;
            for (Counter c : r.refusals.values()) {
                refusals += (long) c.count();
            }
            Long p50 = null;
            Long p90 = null;
            Long p99 = null;
            Long max = null;
            Timer t = r.timers.get(Outcome.OK.ordinal());
            if (t != null) {
                HistogramSnapshot snap = t.takeSnapshot();
                if (snap.count() > 0 || snap.max() > 0) {
                    for (ValueAtPercentile v : snap.percentileValues()) {
                        long micros = Math.max(0, Math.round(v.value(TimeUnit.MICROSECONDS)));
                        if (v.percentile() == 0.5) {
                            p50 = micros;
                        } else if (v.percentile() == 0.9) {
                            p90 = micros;
                        } else if (v.percentile() == 0.99) {
                            p99 = micros;
                        }
                    }
                    max = Math.max(0, Math.round(snap.max(TimeUnit.MICROSECONDS)));
                }
            }
            out.add(new CallSummary.Row(r.key.operation, r.key.protocol, ok + faults + errors + repeats, faults,
                    errors, refusals, repeats, p50, p90, p99, max));
        }
        if (out.size() > CallSummary.MAX_ROWS) {
            out.sort((a, b) -> Long.compare(b.calls() + b.refusals(), a.calls() + a.refusals()));
            out = new ArrayList<>(out.subList(0, CallSummary.MAX_ROWS));
        }
        out.sort(java.util.Comparator.comparing(CallSummary.Row::operation).thenComparing(CallSummary.Row::protocol));
        return new CallSummary(Duration.ofNanos(System.nanoTime() - startedNanos).toSeconds(), out);
    }
}
