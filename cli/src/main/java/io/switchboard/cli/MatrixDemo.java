package io.switchboard.cli;

import io.switchboard.bench.ChildJvm;
import io.switchboard.components.matrix.Block;
import io.switchboard.components.matrix.Blocks;
import io.switchboard.components.matrix.MatrixManager;
import io.switchboard.components.matrix.MatrixWorkerMain;
import io.switchboard.components.matrix.ProtocolCount;
import io.switchboard.components.matrix.WorkerStatus;
import io.switchboard.metastub.CallRecord;
import io.switchboard.metastub.Policies;
import io.switchboard.metastub.SizePolicy;
import io.switchboard.protocol.spi.ProtocolProvider;
import io.switchboard.protocol.spi.Protocols;
import io.switchboard.client.Switchboard;
import java.io.IOException;
import java.io.PrintStream;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.TreeMap;
import java.util.concurrent.CopyOnWriteArrayList;

/**
 * The demo's matrix stage: k worker JVMs ({@link MatrixWorkerMain}) bound in the demo's registry,
 * a manager in the demo's JVM that finds them there and multiplies two n × n matrices by the
 * simple parallel algorithm and by Cannon's, each product checked against the local one.
 */
final class MatrixDemo {
    static final int WORKERS = 4;
    /** Cannon's blocks on the 2 x 2 grid are then 2.16 MB, over the 2 MiB the size policy sends over tcp: the split shows. */
    static final int N = 1040;
    private static final String PREFIX = "demo-matrix-worker-";
    /** The size policy, so that the split shows: Cannon's step calls are small, blocks are large. */
    private static final String POLICY = "size";

    private final PrintStream out;
    private final List<Process> processes = new ArrayList<>();
    private final List<String> names = new ArrayList<>();

    MatrixDemo(PrintStream out) {
        this.out = out;
    }

    /** Starts the worker JVMs; they bind themselves while the echo stage runs. */
    void startWorkers(ChildJvm children, String registryUrl, String secret, Path logDir) throws IOException {
        for (int i = 0; i < WORKERS; i++) {
            names.add(PREFIX + i);
            processes.add(children.startJava(ChildJvm.QUICK_FLAGS, MatrixWorkerMain.class,
                    logDir.resolve(PREFIX + i + ".log"), registryUrl, names.get(i), secret));
        }
    }

    /** The worker JVMs' process ids, in the order started. */
    List<Long> workerPids() {
        return processes.stream().map(Process::pid).toList();
    }

    /** Where the size policy sends small calls: tcp when it is on the class path, else SOAP. */
    private static String smallCalls() {
        ProtocolProvider tcp = Protocols.all().get(SizePolicy.SMALL_CALLS);
        return tcp != null ? tcp.name() + " (calls up to " + tcp.policyMaxBytes() / 1024 + " KiB)"
                : "SOAP (up to " + SizePolicy.DEFAULT_THRESHOLD + " bytes)";
    }

    List<DemoStageResult> run(String registryUrl, Path logDir) throws IOException {
        out.println("== matrix: " + WORKERS + " worker JVMs, a manager here, n = " + N + " ==");
        for (int i = 0; i < processes.size(); i++) {
            ChildJvm.awaitLine(processes.get(i), "READY", "matrix worker JVM " + names.get(i) + " (log " + logDir + ")");
            out.println("worker     " + names.get(i) + " (pid " + processes.get(i).pid() + ") bound itself in the registry");
        }
        List<CallRecord> records = new CopyOnWriteArrayList<>();
        List<DemoStageResult> results = new ArrayList<>();
        Block a = integers(N, 1);
        Block b = integers(N, 2);
        Block expected = Blocks.multiply(a, b);
        try (Switchboard sb = Switchboard.builder(registryUrl).policy(Policies.byName(POLICY)).listener(records::add).connect();
             MatrixManager manager = new MatrixManager(sb, MatrixManager.discover(sb, PREFIX)).workerPolicy(POLICY)) {
            out.println("manager    found " + manager.workers() + " by the prefix " + PREFIX);
            out.println("policy     " + POLICY + " for the manager and the workers: control calls (a few numbers) on "
                    + smallCalls() + ", blocks on gRPC");
            // one untimed product each first: connections, the JIT, and the size policy learns what each
            // operation answers (without it, the first result() call, answering a block, goes where small calls go)
            manager.multiplySimple(a, b);
            manager.multiplyCannon(a, b);
            out.println("warmed up  one untimed product by each algorithm");
            for (String algorithm : List.of("simple", "cannon")) {
                Map<String, Long> workersBefore = outgoing(manager);
                records.clear();
                long start = System.nanoTime();
                Block c = algorithm.equals("simple") ? manager.multiplySimple(a, b) : manager.multiplyCannon(a, b);
                long millis = (System.nanoTime() - start) / 1_000_000;
                boolean exact = Blocks.identical(c, expected);
                List<CallRecord> calls = List.copyOf(records);
                out.printf("%s product in %d ms: %s%n", algorithm.equals("simple") ? "simple parallel" : "Cannon's",
                        millis, exact ? "equal to the local product, bit for bit" : "DIFFERENT from the local product");
                out.println("  the manager's calls:");
                CallBreakdown.print(out, "    ", calls);
                Map<String, Long> workerCalls = minus(outgoing(manager), workersBefore);
                if (!workerCalls.isEmpty()) {
                    out.println("  the workers' own calls (blocks shifted worker to worker), as they report them:");
                    workerCalls.forEach((k, v) -> out.printf("    %-29s %4d call(s)%n", k, v));
                }
                results.add(DemoStageResult.of("matrix " + algorithm, calls, exact, millis + " ms"));
            }
            records.clear();
            out.println("stopping   the workers through their shutdown operation: " + manager.shutdownWorkers() + " accepted");
        }
        out.println();
        return results;
    }

    /** Every worker's outgoing calls so far, as "operation protocol" → calls. */
    private static Map<String, Long> outgoing(MatrixManager manager) {
        Map<String, Long> sum = new TreeMap<>();
        for (WorkerStatus st : manager.status()) {
            for (ProtocolCount pc : st.getOutgoing()) {
                sum.merge(pc.getOperation() + " " + pc.getProtocol(), pc.getCalls(), Long::sum);
            }
        }
        return sum;
    }

    private static Map<String, Long> minus(Map<String, Long> after, Map<String, Long> before) {
        Map<String, Long> d = new TreeMap<>();
        after.forEach((k, v) -> {
            long n = v - before.getOrDefault(k, 0L);
            if (n != 0) {
                d.put(k, n);
            }
        });
        return d;
    }

    /** Small integers: every sum of products is exact in doubles, so any order of summation gives the same bits. */
    private static Block integers(int n, long seed) {
        Random random = new Random(seed);
        double[] values = new double[n * n];
        for (int i = 0; i < values.length; i++) {
            values[i] = random.nextInt(17) - 8;
        }
        return Blocks.of(n, n, values);
    }
}
