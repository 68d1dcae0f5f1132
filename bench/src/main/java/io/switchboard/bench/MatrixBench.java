package io.switchboard.bench;

import io.switchboard.components.matrix.Block;
import io.switchboard.components.matrix.Blocks;
import io.switchboard.components.matrix.MatrixManager;
import io.switchboard.components.matrix.MatrixWorkerMain;
import io.switchboard.components.matrix.ProtocolTally;
import io.switchboard.metastub.Policies;
import io.switchboard.protocol.ClientSettings;
import io.switchboard.client.Switchboard;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.TreeMap;
import me.tongfei.progressbar.ProgressBar;

/**
 * The distributed matrix multiplication of the Rahimi/Wainer/Lewis study as a bench workload:
 * k worker JVMs ({@link MatrixBenchWorker}: a {@link MatrixWorkerMain} worker) bound in the bench
 * server's registry, a manager in this JVM, n × n products by the simple parallel algorithm and by
 * Cannon's, once per row: a protocol policy ({@link #POLICIES}; each policy also steers the workers'
 * own calls in Cannon's shifts) or a plain Java baseline ({@link #BASELINES}), the rows interleaved
 * product by product in a fresh order every round. Entries are small integers, so every product
 * is exact in doubles and each answer must equal the local product bit for bit.
 *
 * <p>The baselines run the same algorithms ({@link MatrixManager} over other {@link
 * io.switchboard.components.matrix.MatrixWorker}s) with the same arithmetic ({@code Blocks}, in a
 * {@code MatrixWorkerService} of their own) on the same data: {@code rmi} over Java RMI ({@link
 * MatrixRmi}) and {@code socket} over a hand-written binary protocol on plain sockets ({@link
 * MatrixSocket}), Cannon's shifts going worker to worker over the same transport. They live in the
 * Switchboard workers' JVMs rather than in JVMs of their own: the same processes, heaps, JIT and
 * garbage collector serve every row, so only the transport differs between rows, and no second
 * set of k JVMs competes for the CPUs while another row is timed. The price is that the rows share
 * one heap: garbage one row leaves is collected during another, which the shuffled order spreads
 * over all of them.
 *
 * <pre>{@code
 * MatrixBench bench = new MatrixBench(config, registryUrl, secret, logDir);
 * List<MatrixBench.Result> results = bench.run(progress);
 * }</pre>
 */
final class MatrixBench {
    /** Policies the matrix workload compares, by the names of the results: SOAP, gRPC or tcp only, and two meta-stub policies. */
    static final Map<String, String> POLICIES = Map.of("soap", "fixed:soap", "grpc", "fixed:grpc", "tcp", "fixed:tcp",
            "adaptive", "adaptive", "size", "size");

    /** The plain Java rows, no Switchboard code on their wire: Java RMI and a raw socket. */
    static final List<String> BASELINES = List.of("rmi", "socket");

    /** Whether {@code name} is a row of the matrix workload (a policy or a baseline). */
    static boolean isRow(String name) {
        return POLICIES.containsKey(name) || BASELINES.contains(name);
    }

    /**
     * @param sizes      matrix orders n
     * @param workers    worker JVMs (a square, for Cannon's algorithm)
     * @param policies   rows: result names from {@link #POLICIES} and {@link #BASELINES}
     * @param reps       timed products per cell at most
     * @param budget     time per cell; a product expected to take over a quarter of it is skipped
     * @param workerFlags JVM flags of each worker JVM
     * @param settle     after a cell's untimed product per row, more rounds of them until the JIT
     *                   compilers of the manager's and the workers' JVMs are quiet, for at most this long
     */
    record Config(List<Integer> sizes, int workers, List<String> policies, int reps, Duration budget, List<String> workerFlags,
                  Duration settle) {
    }


    /**
     * One cell: an algorithm at one n under one policy, with its product times (sorted) or why it has none.
     *
     * @param cpuNanos  per product, the CPU time of the manager's and the workers' JVMs together,
     *                  sorted; empty where the scheduler's figures cannot be read
     * @param waitNanos per product, the time their threads were runnable but waited for a CPU, sorted
     */
    record Result(String algorithm, int n, String policy, long[] samplesNanos, Map<String, Long> callsByProtocol, String note,
                  long[] cpuNanos, long[] waitNanos) {
        Result(String algorithm, int n, String policy, String note) {
            this(algorithm, n, policy, new long[0], Map.of(), note, new long[0], new long[0]);
        }

        boolean measured() {
            return samplesNanos.length > 0;
        }

        /** The median CPU time per product in ms, or -1 if not known. */
        double cpuMillis() {
            return cpuNanos.length == 0 ? -1 : PhaseBreakdown.quantile(cpuNanos, 0.5) / 1e3;
        }

        /** The median time per product the JVMs' threads waited for a CPU, in ms, or -1 if not known. */
        double waitMillis() {
            return waitNanos.length == 0 ? -1 : PhaseBreakdown.quantile(waitNanos, 0.5) / 1e3;
        }

        double quantileMillis(double q) {
            return PhaseBreakdown.quantile(samplesNanos, q) / 1e3;
        }
    }

    private final Config config;
    private final String registryUrl;
    private final String secret;
    private final Path logDir;

    MatrixBench(Config config, String registryUrl, String secret, Path logDir) {
        this.config = config;
        this.registryUrl = registryUrl;
        this.secret = secret;
        this.logDir = logDir;
    }

    /** Steps the progress bar takes: one per cell. */
    int cellCount() {
        return config.sizes().size() * 2 * config.policies().size();
    }

    List<Result> run(ProgressBar progress) throws Exception {
        progress.setExtraMessage("matrix: starting " + config.workers() + " worker JVMs");
        List<String> names = new ArrayList<>();
        List<Process> processes = new ArrayList<>();
        String prefix = "bench-matrix-worker-";
        try (ChildJvm children = new ChildJvm()) {   // SIGTERM at the end: the worker unbinds itself in its shutdown hook
            for (int i = 0; i < config.workers(); i++) {
                names.add(prefix + i);
                processes.add(children.startJava(config.workerFlags(), MatrixBenchWorker.class,
                        logDir.resolve("bench-matrix-worker-" + i + ".log"), registryUrl, names.get(i), secret));
            }
            Map<String, List<String>> baselineNames = new LinkedHashMap<>();
            for (Process p : processes) {
                String ready = ChildJvm.awaitLine(p, "READY", "a matrix worker JVM");
                for (String field : ready.split(" ")) {
                    int eq = field.indexOf('=');
                    if (eq > 0 && BASELINES.contains(field.substring(0, eq))) {
                        baselineNames.computeIfAbsent(field.substring(0, eq), k -> new ArrayList<>()).add(field.substring(eq + 1));
                    }
                }
            }
            List<Long> pids = new ArrayList<>(List.of(ProcessHandle.current().pid()));
            processes.forEach(p -> pids.add(p.pid()));
            return measure(names, baselineNames, SchedulerAccount.of(pids), progress);
        }
    }

    /**
     * @param names         the Switchboard workers' names in the registry
     * @param baselineNames per baseline, the workers' names (addresses) on its transport, in the same order
     */
    private List<Result> measure(List<String> names, Map<String, List<String>> baselineNames, SchedulerAccount account,
                                 ProgressBar progress) throws Exception {
        Map<String, Switchboard> switchboards = new LinkedHashMap<>();
        Map<String, MatrixManager> managers = new LinkedHashMap<>();
        Map<String, ProtocolTally> tallies = new LinkedHashMap<>();
        List<MatrixSocket.Client> sockets = new ArrayList<>();
        ClientSettings settings = ClientSettings.defaults().withMaxMessageBytes(BenchServer.MAX_MESSAGE_BYTES)
                .withCallTimeout(Duration.ofMillis(Sweep.CALL_TIMEOUT_MILLIS));
        List<Result> results = new ArrayList<>();
        try {
            for (String policy : config.policies()) {
                ProtocolTally tally = new ProtocolTally();
                tallies.put(policy, tally);
                if (policy.equals("rmi")) {
                    List<String> stubs = baselineNames.get(policy);
                    managers.put(policy, new MatrixManager(stubs, stubs.stream().map(s -> new MatrixRmi.Client(s, tally)).toList()));
                } else if (policy.equals("socket")) {
                    List<String> addresses = baselineNames.get(policy);
                    List<MatrixSocket.Client> clients = addresses.stream().map(a -> new MatrixSocket.Client(a, tally)).toList();
                    sockets.addAll(clients);
                    managers.put(policy, new MatrixManager(addresses, clients));
                } else {
                    Switchboard sb = Switchboard.builder(registryUrl).settings(settings).policy(Policies.byName(POLICIES.get(policy)))
                            .listener(tally).follow(false).connect();
                    switchboards.put(policy, sb);
                    managers.put(policy, new MatrixManager(sb, names).workerPolicy(POLICIES.get(policy)));
                }
            }
            for (String algorithm : List.of("simple", "cannon")) {
                Map<String, Result> previous = new LinkedHashMap<>();
                for (int n : config.sizes()) {
                    progress.setExtraMessage("matrix " + algorithm + " n=" + n);
                    Block a = integers(n, 1);
                    Block b = integers(n, 2);
                    Block expected = Blocks.multiply(a, b);
                    System.gc();
                    Map<String, List<Long>> samples = new LinkedHashMap<>();
                    Map<String, List<Long>> cpu = new LinkedHashMap<>();
                    Map<String, List<Long>> waits = new LinkedHashMap<>();
                    Map<String, String> failures = new LinkedHashMap<>();
                    Map<String, Long> elapsed = new LinkedHashMap<>();
                    for (String policy : config.policies()) {
                        String skip = skipReason(previous.get(policy), n);
                        if (skip != null) {
                            failures.put(policy, skip);
                        } else {
                            samples.put(policy, new ArrayList<>());
                            cpu.put(policy, new ArrayList<>());
                            waits.put(policy, new ArrayList<>());
                            elapsed.put(policy, 0L);
                        }
                    }
                    for (String policy : samples.keySet()) {   // one untimed product each: connections, JIT
                        once(managers.get(policy), algorithm, a, b, expected, policy, failures);
                    }
                    String unsettled = settle(account, managers, samples.keySet(), algorithm, a, b, expected, failures);
                    samples.keySet().forEach(policy -> tallies.get(policy).reset());
                    List<String> order = new ArrayList<>(samples.keySet());
                    java.util.Random shuffle = new java.util.Random(order.size());   // the same orders in every run
                    for (int r = 0; r < config.reps(); r++) {
                        // a fresh order every round: the product after a SOAP one pays for the garbage SOAP
                        // left in the workers, and that must not always be the same policy (a rotation kept
                        // the cycle, so the same policy always came right after it)
                        java.util.Collections.shuffle(order, shuffle);
                        for (String policy : order) {
                            if (failures.containsKey(policy) || (r > 0 && elapsed.get(policy) > config.budget().toNanos())) {
                                continue;
                            }
                            SchedulerAccount.Snapshot before = account.snapshot();
                            long t = once(managers.get(policy), algorithm, a, b, expected, policy, failures);
                            SchedulerAccount.Spent spent = account.snapshot().minus(before);
                            if (t >= 0) {
                                samples.get(policy).add(t);
                                if (spent.available()) {
                                    cpu.get(policy).add(spent.cpuNanos());
                                    waits.get(policy).add(spent.waitNanos());
                                }
                                elapsed.put(policy, elapsed.get(policy) + t);
                            }
                        }
                    }
                    for (String policy : config.policies()) {
                        Result result;
                        if (failures.containsKey(policy)) {
                            result = new Result(algorithm, n, policy, failures.get(policy));
                        } else {
                            long[] s = samples.get(policy).stream().mapToLong(Long::longValue).sorted().toArray();
                            Map<String, Long> calls = new TreeMap<>();
                            tallies.get(policy).byOperation().values().forEach(m -> m.forEach((p, c) -> calls.merge(p, c, Long::sum)));
                            calls.replaceAll((p, c) -> Math.round((double) c / Math.max(1, s.length)));
                            String budgetNote = s.length < config.reps() ? s.length + " of " + config.reps()
                                    + " products (time budget)" : null;
                            result = new Result(algorithm, n, policy, s, calls, budgetNote == null ? unsettled
                                    : unsettled == null ? budgetNote : budgetNote + "; " + unsettled,
                                    sorted(cpu.get(policy)), sorted(waits.get(policy)));
                        }
                        tallies.get(policy).reset();
                        previous.put(policy, result);
                        results.add(result);
                        progress.step();
                    }
                }
            }
        } finally {
            managers.values().forEach(MatrixManager::close);
            switchboards.values().forEach(Switchboard::close);
            sockets.forEach(MatrixSocket.Client::close);
        }
        return results;
    }

    /**
     * Rounds of untimed products, every row once per round in a fresh order, until a slice of them
     * (about a second) kept the JIT compilers of all the JVMs busy for at most 2% of it
     * ({@link Sweep#untilQuiet}), or {@code settle} has passed. Without it a small product times
     * compiling: a Switchboard row has more code to compile than the socket's. Returns a note if
     * the compilers never went quiet.
     */
    private String settle(SchedulerAccount account, Map<String, MatrixManager> managers, java.util.Set<String> rows,
                          String algorithm, Block a, Block b, Block expected, Map<String, String> failures) {
        if (config.settle().isZero()) {
            return null;
        }
        List<String> order = new ArrayList<>(rows);
        java.util.Random shuffle = new java.util.Random(order.size() + 1L);
        Runnable round = () -> {
            java.util.Collections.shuffle(order, shuffle);
            for (String policy : order) {
                if (!failures.containsKey(policy)) {
                    once(managers.get(policy), algorithm, a, b, expected, policy, failures);
                }
            }
        };
        // the compiler threads' CPU across all the JVMs; none readable (not Linux): counted as quiet
        boolean quiet = Sweep.untilQuiet(round, System.nanoTime() + config.settle().toNanos(), account::compilingFromNow);
        return quiet ? null : "JIT compilers still busy after " + config.settle().toSeconds() + " s of extra warm-up";
    }

    private static long[] sorted(List<Long> values) {
        return values.stream().mapToLong(Long::longValue).sorted().toArray();
    }

    /** One product, checked; its time in nanoseconds, or -1 with the reason put in {@code failures}. */
    private static long once(MatrixManager manager, String algorithm, Block a, Block b, Block expected, String policy,
            Map<String, String> failures) {
        long start = System.nanoTime();
        Block c;
        try {
            c = algorithm.equals("simple") ? manager.multiplySimple(a, b) : manager.multiplyCannon(a, b);
        } catch (RuntimeException e) {
            failures.put(policy, "failed: " + Sweep.describe(e));
            return -1;
        }
        long t = System.nanoTime() - start;
        if (!Blocks.identical(c, expected)) {
            failures.put(policy, "wrong answer: the product differs from the local product");
            return -1;
        }
        return t;
    }

    private String skipReason(Result before, int n) {
        if (before == null) {
            return null;
        }
        if (!before.measured()) {
            return "skipped: " + before.note().replaceFirst("^skipped: ", "");
        }
        double expectedSeconds = before.quantileMillis(0.5) / 1e3 * Math.pow((double) n / before.n(), 2);   // at least the data grows as n^2
        double limit = config.budget().toMillis() / 1e3 / 4;
        return expectedSeconds > limit ? String.format("skipped: about %.1f s per product expected, over a quarter of the %d s budget",
                expectedSeconds, config.budget().toSeconds()) : null;
    }

    /** An n × n matrix of integers in [-8, 8]: every sum of products is exact in doubles, so any order of summation gives the same bits. */
    static Block integers(int n, long seed) {
        Random random = new Random(seed);
        double[] values = new double[n * n];
        for (int i = 0; i < values.length; i++) {
            values[i] = random.nextInt(17) - 8;
        }
        return Blocks.of(n, n, values);
    }

    /** The orders of the full and the quick run. */
    static List<Integer> defaultSizes(boolean quick) {
        return quick ? List.of(40) : Arrays.asList(100, 200, 400, 700, 1000);
    }

    /**
     * Worker JVM flags: a full run's workers get a fixed heap and G1 as the bench server does; a
     * quick run's start faster (C1 only, serial GC, small heap), since four of them starting on two
     * busy cores took half of a minute.
     */
    static List<String> workerFlags(boolean quick) {
        return quick ? ChildJvm.QUICK_FLAGS : List.of("-Xms768m", "-Xmx768m", "-XX:+UseG1GC");
    }
}
