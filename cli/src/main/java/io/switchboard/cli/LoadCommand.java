package io.switchboard.cli;

import io.switchboard.client.DynamicStub;
import io.switchboard.client.Switchboard;
import io.switchboard.codec.dynamic.DynamicRecord;
import io.switchboard.idl.runtime.DeclaredFault;
import io.switchboard.metastub.CallRecord;
import io.switchboard.metastub.Policies;
import io.switchboard.protocol.DaemonThreads;
import io.switchboard.protocol.TransportException;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.Callable;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.LongAdder;
import java.util.concurrent.locks.LockSupport;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Option;

/**
 * {@code ./switchboard load NAME OPERATION [FIELD=VALUE ...]}: puts a deployment under load as
 * any client would reach it ({@code Switchboard.lookup}: every replica, failover, the registry's
 * watches), from {@code --concurrency} callers for {@code --duration} seconds, optionally at a
 * fixed {@code --rate}; a progress line a second on stderr, then a summary: calls, answered,
 * failed by kind, calls per protocol, fallbacks, failovers, calls/s and latency percentiles. With
 * {@code --json} the summary is one JSON object on the last line of stdout. Ctrl-C or SIGTERM ends
 * the run early the same way: no new calls, those under way finish, the summary covers them all;
 * {@code --duration 0} runs until then.
 *
 * <pre>{@code
 * ./switchboard load Echo echoDoubles values="1 2 3" --registry http://127.0.0.1:8081/axis2/services/Registry \
 *     --concurrency 16 --duration 10 --json
 * }</pre>
 */
@Command(name = "load", mixinStandardHelpOptions = true,
        description = "Call an operation from many callers for a while, through the registry as any client, and "
                + "summarise: calls, failures by kind, protocols, fallbacks, failovers, calls/s, latency percentiles.")
final class LoadCommand implements Callable<Integer> {
    /** How long Ctrl-C or SIGTERM waits for the calls under way and the summary before the process ends. */
    static final long STOP_GRACE_SECONDS = 30;

    @Mixin
    CallTarget target = new CallTarget();

    @Option(names = "--concurrency", defaultValue = "8", description = "Callers, each with one call in flight "
            + "(default ${DEFAULT-VALUE}).")
    int concurrency;

    @Option(names = "--duration", paramLabel = "SECONDS", defaultValue = "10", description = "How long to call "
            + "(default ${DEFAULT-VALUE} s; 0: until Ctrl-C or SIGTERM). Either ends the run early: no new calls, "
            + "those under way finish, then the summary.")
    double durationSeconds;

    @Option(names = "--rate", paramLabel = "CALLS_PER_S", description = "Start calls at this rate in all, spread "
            + "evenly (default: as fast as the callers go).")
    Double rate;

    @Option(names = "--json", description = "Print the summary as one JSON object on the last line of stdout.")
    boolean json;

    @Mixin
    TlsOptions tls = new TlsOptions();

    @Mixin
    TokenOptions.Caller token = new TokenOptions.Caller();

    @Override
    public Integer call() throws InterruptedException {
        if (concurrency < 1 || durationSeconds < 0 || (rate != null && rate <= 0)) {
            System.err.println("--concurrency and --rate must be positive, --duration 0 or more");
            return 2;
        }
        // Ctrl-C or SIGTERM: the callers start no new call, and the hook waits for the summary
        AtomicBoolean stopping = new AtomicBoolean();
        CountDownLatch summarised = new CountDownLatch(1);
        Thread hook = new Thread(() -> {
            stopping.set(true);
            try {
                summarised.await(STOP_GRACE_SECONDS, TimeUnit.SECONDS);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
        }, "load-stop");
        Runtime.getRuntime().addShutdownHook(hook);
        try {
            return run(stopping);
        } finally {
            summarised.countDown();
            try {
                Runtime.getRuntime().removeShutdownHook(hook);
            } catch (IllegalStateException shuttingDown) {
                // the hook is running: it waited for the summary above
            }
        }
    }

    private int run(AtomicBoolean stopping) throws InterruptedException {
        Tally tally = new Tally();
        try (Switchboard sb = Switchboard.builder(target.registry).policy(Policies.byName(target.policy))
                .listener(tally::attempt).settings(token.client(tls.client())).connect()) {
            DynamicStub stub = sb.dynamic(target.name).withOptions(target.options());
            String problem = target.problem(stub);
            if (problem != null) {
                System.err.println(problem);
                return 2;
            }
            long start = System.nanoTime();
            long end = durationSeconds == 0 ? Long.MAX_VALUE : start + (long) (durationSeconds * 1e9);
            AtomicLong nextStart = new AtomicLong(start);
            long interval = rate == null ? 0 : (long) (1e9 / rate);
            List<Thread> callers = new ArrayList<>();
            for (int i = 0; i < concurrency; i++) {
                DynamicRecord request = target.request(stub);   // one per caller: not shared between threads
                Thread t = DaemonThreads.start(() -> {
                    while (true) {
                        if (interval > 0) {
                            long at = nextStart.getAndAdd(interval);
                            if (durationSeconds > 0 && at - end >= 0) {
                                return;
                            }
                            LockSupport.parkNanos(at - System.nanoTime());
                        } else if (durationSeconds > 0 && System.nanoTime() - end >= 0) {
                            return;
                        }
                        if (stopping.get()) {
                            return;
                        }
                        tally.call(stub, request);
                    }
                }, "load-" + i);
                callers.add(t);
            }
            long second = start;
            Tally.Snapshot last = tally.snapshot();
            while (callers.stream().anyMatch(Thread::isAlive)) {
                second += TimeUnit.SECONDS.toNanos(1);
                long wait = second - System.nanoTime();
                for (Thread t : callers) {
                    t.join(Math.max(1, TimeUnit.NANOSECONDS.toMillis(wait)));
                    wait = second - System.nanoTime();
                    if (wait <= 0) {
                        break;
                    }
                }
                Tally.Snapshot now = tally.snapshot();
                System.err.printf(Locale.ROOT, "%5.0f s  %8d calls  %6d/s  %d failed%n",
                        (System.nanoTime() - start) / 1e9, now.calls, now.calls - last.calls, now.failed);
                last = now;
            }
            double elapsed = (System.nanoTime() - start) / 1e9;
            print(tally, elapsed);
            return tally.failed.sum() == 0 ? 0 : 1;
        }
    }

    private void print(Tally t, double elapsed) {
        long calls = t.calls.sum();
        long failed = t.failed.sum();
        Map<String, Long> failures = new TreeMap<>();
        t.failures.forEach((k, v) -> failures.put(k, v.sum()));
        Map<String, Long> protocols = new TreeMap<>();
        t.protocols.forEach((k, v) -> protocols.put(k, v.sum()));
        double perSecond = calls / elapsed;
        System.out.printf(Locale.ROOT, "calls      %d in %.1f s (%.0f/s), %d answered, %d failed%n", calls, elapsed,
                perSecond, calls - failed, failed);
        failures.forEach((kind, n) -> System.out.printf(Locale.ROOT, "  failed   %-28s %d%n", kind, n));
        System.out.println("protocols  " + protocols + " (the protocol that answered)");
        System.out.printf(Locale.ROOT, "fallbacks  %d, failovers %d%n", t.fallbacks.sum(), t.failovers.sum());
        System.out.printf(Locale.ROOT, "latency    p50 %.2f ms, p90 %.2f ms, p99 %.2f ms, max %.2f ms%n",
                t.latency.percentileMillis(50), t.latency.percentileMillis(90), t.latency.percentileMillis(99),
                t.latency.maxMillis());
        if (json) {
            StringBuilder s = new StringBuilder("{");
            s.append("\"calls\":").append(calls).append(",\"ok\":").append(calls - failed).append(",\"failed\":")
                    .append(failed).append(",\"failures\":").append(jsonMap(failures)).append(",\"protocols\":")
                    .append(jsonMap(protocols)).append(",\"fallbacks\":").append(t.fallbacks.sum())
                    .append(",\"failovers\":").append(t.failovers.sum())
                    .append(String.format(Locale.ROOT, ",\"duration_s\":%.3f,\"calls_per_s\":%.1f", elapsed, perSecond))
                    .append(String.format(Locale.ROOT, ",\"p50_ms\":%.3f,\"p90_ms\":%.3f,\"p99_ms\":%.3f,\"max_ms\":%.3f",
                            t.latency.percentileMillis(50), t.latency.percentileMillis(90),
                            t.latency.percentileMillis(99), t.latency.maxMillis()))
                    .append('}');
            System.out.println(s);
        }
        System.out.flush();
    }

    private static String jsonMap(Map<String, Long> map) {
        StringBuilder s = new StringBuilder("{");
        map.forEach((k, v) -> {
            if (s.length() > 1) {
                s.append(',');
            }
            s.append('"').append(k.replace("\\", "\\\\").replace("\"", "\\\"")).append("\":").append(v);
        });
        return s.append('}').toString();
    }

    /** What the callers did, counted without locks. */
    static final class Tally {
        final LongAdder calls = new LongAdder();
        final LongAdder failed = new LongAdder();
        final Map<String, LongAdder> failures = new ConcurrentHashMap<>();
        final Map<String, LongAdder> protocols = new ConcurrentHashMap<>();
        final LongAdder fallbacks = new LongAdder();
        final LongAdder failovers = new LongAdder();
        final LatencyHistogram latency = new LatencyHistogram();

        record Snapshot(long calls, long failed) {
        }

        Snapshot snapshot() {
            return new Snapshot(calls.sum(), failed.sum());
        }

        void call(DynamicStub stub, DynamicRecord request) {
            long t0 = System.nanoTime();
            String failure = null;
            Exception cause = null;
            try {
                stub.call(request);
            } catch (DeclaredFault fault) {
                failure = "declared-fault";
                cause = fault;
            } catch (TransportException e) {
                failure = e.getClass().getSimpleName() + (e.getClass() == TransportException.class
                        ? (e.delivery() == TransportException.Delivery.NOT_DELIVERED ? " (not delivered)" : " (may have run)")
                        : "");
                cause = e;
            } catch (RuntimeException e) {
                failure = e.getClass().getSimpleName();
                cause = e;
            }
            latency.record(System.nanoTime() - t0);
            calls.increment();
            if (failure != null) {
                failed.increment();
                boolean[] first = {false};
                failures.computeIfAbsent(failure, k -> {
                    first[0] = true;
                    return new LongAdder();
                }).increment();
                if (first[0]) {   // the first of each kind, whole, for the reason; the summary counts the rest
                    System.err.println("failed    " + failure + ": " + cause.getMessage());
                }
            }
        }

        /** Every attempt's record: the protocol that answered, fallbacks, failovers. */
        void attempt(CallRecord r) {
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
    }

    /**
     * Latencies in buckets of about 1.5 % (64 per power of two of microseconds), without locks:
     * millions of calls in constant memory.
     */
    static final class LatencyHistogram {
        private static final int SUB = 64;
        private final java.util.concurrent.atomic.AtomicLongArray buckets = new java.util.concurrent.atomic.AtomicLongArray(SUB * 40);
        private final AtomicLong max = new AtomicLong();
        private final LongAdder count = new LongAdder();

        void record(long nanos) {
            long micros = Math.max(0, nanos / 1000);
            buckets.incrementAndGet(index(micros));
            count.increment();
            max.accumulateAndGet(nanos, Math::max);
        }

        static int index(long micros) {
            if (micros < SUB) {
                return (int) micros;
            }
            int exponent = 63 - Long.numberOfLeadingZeros(micros);   // >= 6
            int mantissa = (int) ((micros >>> (exponent - 6)) & (SUB - 1));
            return (exponent - 5) * SUB + mantissa;
        }

        /** The lowest value (µs) of a bucket. */
        static long lowest(int index) {
            if (index < SUB) {
                return index;
            }
            int exponent = index / SUB + 5;
            long mantissa = index % SUB;
            return (SUB + mantissa) << (exponent - 6);
        }

        double percentileMillis(double p) {
            long n = count.sum();
            if (n == 0) {
                return 0;
            }
            long rank = (long) Math.ceil(p / 100 * n);
            long seen = 0;
            for (int i = 0; i < buckets.length(); i++) {
                seen += buckets.get(i);
                if (seen >= rank) {
                    return Math.min(lowest(i + 1) / 1000.0, maxMillis());
                }
            }
            return maxMillis();
        }

        double maxMillis() {
            return max.get() / 1e6;
        }
    }
}
