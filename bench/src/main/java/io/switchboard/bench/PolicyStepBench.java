package io.switchboard.bench;

import io.switchboard.components.echo.EchoComponent;
import io.switchboard.components.echo.EchoService;
import io.switchboard.components.echo.EchoStub;
import io.switchboard.metastub.AdaptivePolicy;
import io.switchboard.metastub.CallContext;
import io.switchboard.metastub.CallListener;
import io.switchboard.metastub.CallRecord;
import io.switchboard.metastub.MetaStub;
import io.switchboard.metastub.SelectionPolicy;
import io.switchboard.metastub.SizePolicy;
import io.switchboard.protocol.CallOptions;
import io.switchboard.registry.ComponentEntry;
import io.switchboard.server.ComponentServer;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Random;

/**
 * What a policy's step adds to a small tcp call whose path the caches lost: client and server in
 * this JVM, every timed call right after a SOAP and a gRPC call of another meta-stub (which leave
 * the caches with their own code and data), the rows in a fresh order every round. The rows share
 * one meta-stub and its connection: tcp pinned on the call, {@code size}, {@code adaptive}, and
 * {@code adaptive}'s learning with a choice that costs nothing (so its step's own part shows),
 * and tcp pinned again through a second stub, the control: a row's own stub and place in the
 * order cost nothing, so what the policy rows add over the first pinned row is their path's. A
 * tcp row pinned through a meta-stub of its own is there for scale. Each row's calls that did
 * not go over tcp's Unix socket are counted (a re-probe of another protocol every 10 s). With
 * fewer rows than the small-call bench and no second JVM, the differences are steadier from run
 * to run.
 *
 * <pre>{@code
 * taskset -c 0 java -cp "bench/target/classes:cli/target/lib/*" io.switchboard.bench.PolicyStepBench empty 8000
 * }</pre>
 */
public final class PolicyStepBench {
    /** Rows in the order reported. */
    static final List<String> ROWS = List.of("pinned (own meta-stub)", "pinned", "size", "adaptive, no choice",
            "adaptive", "pinned, a second stub");

    private PolicyStepBench() {
    }

    public static void main(String[] args) throws Exception {
        String workload = args.length > 0 ? args[0] : "empty";
        int rounds = args.length > 1 ? Integer.parseInt(args[1]) : 8000;
        Map<String, long[]> rows = run(workload, rounds);
        long pinned = rows.get("pinned")[0];
        System.out.printf(Locale.ROOT, "%s, %,d rounds, the first quarter left out as warm-up%n", workload, rounds);
        System.out.println("| row | median µs | p10 µs | p90 µs | median - pinned's, µs | calls not over tcp's Unix socket |");
        System.out.println("| --- | ---: | ---: | ---: | ---: | ---: |");
        rows.forEach((row, q) -> System.out.printf(Locale.ROOT, "| %s | %.2f | %.2f | %.2f | %+.2f | %d |%n",
                row, q[0] / 1e3, q[1] / 1e3, q[2] / 1e3, (q[0] - pinned) / 1e3, q[3]));
    }

    /**
     * Each row's median, p10 and p90 in nanoseconds and how many of its calls did not go over tcp's
     * Unix socket, by {@link #ROWS}; {@code workload} is {@code empty} or {@code doubles}.
     */
    static Map<String, long[]> run(String workload, int rounds) throws Exception {
        if (!workload.equals("empty") && !workload.equals("doubles")) {
            throw new IllegalArgumentException("workload must be empty or doubles: " + workload);
        }
        if (rounds < 4) {   // a quarter is left out as warm-up; the rest must hold a sample
            throw new IllegalArgumentException("rounds must be 4 or more: " + rounds);
        }
        try (ComponentServer server = ComponentServer.builder().protocols("tcp", "grpc", "soap").lease(Duration.ZERO).build()) {
            ComponentEntry entry = server.export(EchoComponent.skeleton(new EchoService()));
            long[] offTheWay = new long[ROWS.size()];
            int[] current = {0};   // the row whose call is under way: its records come on this thread
            CallListener ways = r -> {
                if (!"tcp".equals(r.protocol()) || !"unix".equals(r.via())) {
                    offTheWay[current[0]]++;
                }
            };
            try (MetaStub own = metaStub(entry, ways); MetaStub shared = metaStub(entry, ways);
                 MetaStub others = metaStub(entry, r -> { })) {
                EchoStub[] rows = {
                    stub(own, MetaStub.PROTOCOL, "tcp"),
                    stub(shared, MetaStub.PROTOCOL, "tcp"),
                    stub(shared, MetaStub.POLICY, new SizePolicy()),
                    stub(shared, MetaStub.POLICY, new LearningOnly(new AdaptivePolicy())),
                    stub(shared, MetaStub.POLICY, new AdaptivePolicy()),
                    stub(shared, MetaStub.PROTOCOL, "tcp"),
                };
                EchoStub soap = stub(others, MetaStub.PROTOCOL, "soap");
                EchoStub grpc = stub(others, MetaStub.PROTOCOL, "grpc");
                double[] values = {1, 2, 3, 4, 5, 6, 7, 8, 9, 10};
                long[][] times = new long[rows.length][rounds];
                List<Integer> order = new ArrayList<>();
                for (int i = 0; i < rows.length; i++) {
                    order.add(i);
                }
                Random shuffle = new Random(rows.length);
                for (int r = 0; r < rounds; r++) {
                    Collections.shuffle(order, shuffle);
                    for (int row : order) {
                        soap.empty();
                        grpc.empty();
                        current[0] = row;
                        long start = System.nanoTime();
                        if (workload.equals("empty")) {
                            rows[row].empty();
                        } else if (rows[row].echoDoubles(values).length != values.length) {
                            throw new IllegalStateException("wrong answer");
                        }
                        times[row][r] = System.nanoTime() - start;
                    }
                }
                Map<String, long[]> quantiles = new LinkedHashMap<>();
                for (int i = 0; i < rows.length; i++) {
                    long[] timed = Arrays.copyOfRange(times[i], rounds / 4, rounds);
                    Arrays.sort(timed);
                    quantiles.put(ROWS.get(i), new long[] {timed[timed.length / 2], timed[timed.length / 10],
                        timed[timed.length * 9 / 10], offTheWay[i]});
                }
                return quantiles;
            }
        }
    }

    private static MetaStub metaStub(ComponentEntry entry, CallListener listener) {
        return MetaStub.builder(EchoComponent.DESCRIPTOR).endpoints(entry.endpoints())
                .serverRecognisesCallIds(entry.has(ComponentEntry.CALL_IDS)).listener(listener).build();
    }

    private static <T> EchoStub stub(MetaStub channel, CallOptions.Key<T> key, T value) {
        return EchoComponent.stub(channel).withOptions(CallOptions.DEFAULT.with(key, value));
    }

    /** {@code adaptive}'s learning with a choice that costs nothing: tcp, where {@code adaptive} sends these calls. */
    static final class LearningOnly implements SelectionPolicy {
        private final AdaptivePolicy learner;

        LearningOnly(AdaptivePolicy learner) {
            this.learner = learner;
        }

        @Override
        public String name() {
            return "adaptive-learning-only";
        }

        @Override
        public String select(CallContext call, List<String> candidates) {
            return "tcp";
        }

        @Override
        public void observe(CallRecord record) {
            learner.observe(record);
        }

        @Override
        public long learningEstimateCap() {
            return learner.learningEstimateCap();
        }
    }
}
