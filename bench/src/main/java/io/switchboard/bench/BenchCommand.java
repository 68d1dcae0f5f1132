package io.switchboard.bench;

import io.switchboard.protocol.spi.PhaseMarks;
import io.switchboard.protocol.spi.Protocols;
import io.switchboard.testing.TestCertificates;
import java.io.PrintStream;
import java.net.URISyntaxException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.Callable;
import java.util.concurrent.atomic.AtomicReference;
import java.util.stream.Collectors;
import me.tongfei.progressbar.ProgressBar;
import picocli.CommandLine.Command;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.Parameters;
import picocli.CommandLine.Spec;

/**
 * {@code ./switchboard bench}: the SC2000 round-trip experiments (empty call, {@code double[]},
 * {@code LinkEntry} lists) over Switchboard's protocols and policies, in process ({@code local}) and
 * over plain Java (raw socket, RMI, ObjectOutputStream), measured in one run with the server in a
 * forked JVM; and the async throughput ({@link AsyncBench}).
 *
 * <pre>{@code
 * ./switchboard bench --quick                              # CI: small sizes, well under a minute
 * ./switchboard bench                                      # full sweep: 10..10^7 doubles, 10..10^6 nodes
 * ./switchboard bench --workloads doubles --protocols socket,rmi,soap --max-doubles 1000000 --out /tmp/r
 * ./switchboard bench --workloads async --protocols grpc,soap,local   # calls/s with 1, 8, 64 calls in flight
 * ./switchboard bench --phases                            # phase breakdown of one call, 1,000-node list (Gantt chart)
 * ./switchboard bench --jmh Negotiation -- -f 1 -wi 3 -w 1 -i 5 -r 1   # JMH micro-benchmarks instead
 * }</pre>
 */
@Command(name = "bench", mixinStandardHelpOptions = true, sortOptions = false,
        description = {"Round-trip times of the SC2000 workloads over each protocol, client and server in separate JVMs on loopback.",
            "Writes bench.csv, bench.md (ratios against raw socket and SOAP), log-log plots (PNG) and async.csv/async.md "
                    + "(calls/s with 1, 8, 64 calls in flight) to the output folder."})
public final class BenchCommand implements Callable<Integer> {
    @Option(names = "--quick", description = "Small sizes and few repetitions, for CI (well under a minute).")
    boolean quick;

    @Option(names = "--protocols", split = ",", paramLabel = "NAME",
            defaultValue = "soap,grpc,adaptive,size,local,grpc-plain,grpc-plain-direct,axis2,rmi,fory,oos,socket",
            description = "Protocols (a Switchboard protocol pinned on each call; tcp and grpc over TCP, tcp-unix and grpc-unix "
                    + "over the server's Unix domain sockets, each through a meta-stub of its own; local: the component in this JVM, called "
                    + "through a stub over the in-process protocol; tcp-mtls and tcp-mtls-authz: tcp over TCP with mutual TLS, without and "
                    + "with a 20-rule authorization policy, on servers of their own; tcp-lookup: tcp pinned on each call through "
                    + "the stub the policy rows share, their path without the choice), meta-stub policies, and the plain peers: socket (a "
                    + "hand-written protocol; socket-unix: the same over a Unix domain socket; tcp-raw: a hand-written "
                    + "baidu_std client of the tcp server's Unix socket), grpc-plain and "
                    + "grpc-plain-direct (grpc-java unary, default and direct executor), "
                    + "axis2 (a bare Axis2 POJO service), rmi, fory (Apache Fory over a socket), oos (object streams); "
                    + "names that are neither are skipped with a note. Default: ${DEFAULT-VALUE}.")
    List<String> protocols;

    @Option(names = "--workloads", split = ",", paramLabel = "NAME", defaultValue = "empty,doubles,list,matrix,async",
            description = "Any of empty, doubles, list (the SC2000 sweep), matrix (distributed matrix multiplication on "
                    + "worker JVMs for the policies among --protocols, with rmi and socket as its plain Java baselines, results "
                    + "in matrix.md/.csv/.png) and async (calls/s with 1, 8, 64 calls in flight over "
                    + "the Switchboard protocols among --protocols, results in async.md/.csv). Default: ${DEFAULT-VALUE}.")
    List<String> workloads;

    @Option(names = "--matrix-sizes", split = ",", paramLabel = "N",
            description = "Matrix orders n for the matrix workload (default 100,200,400,700,1000; 40 with --quick, "
                    + "whose worker JVMs run C1 only).")
    List<Integer> matrixSizes;

    @Option(names = "--matrix-workers", paramLabel = "K", defaultValue = "4",
            description = "Worker JVMs for the matrix workload, a square (Cannon's grid). Default: ${DEFAULT-VALUE}.")
    int matrixWorkers;

    @Option(names = "--async-sizes", split = ",", paramLabel = "N",
            description = "double[] lengths for the async workload (default 10,10000; 10 with --quick).")
    List<Integer> asyncSizes;

    @Option(names = "--async-millis", paramLabel = "MS",
            description = "Time per async cell (default 3000; 400 with --quick); the warm-up per protocol and size is as long.")
    Integer asyncMillis;

    @Option(names = "--out", paramLabel = "DIR", description = "Output folder. Default: results/ at the repository root.")
    Path out;

    @Option(names = "--sizes", split = ",", paramLabel = "N",
            description = "Explicit sizes for doubles and list (instead of powers of ten up to the maximum).")
    List<Integer> sizes;

    @Option(names = "--max-doubles", paramLabel = "N", description = "Largest double[] (default 10^7; 10^4 with --quick unless --sizes is given).")
    Integer maxDoubles;

    @Option(names = "--max-list", paramLabel = "N", description = "Largest list (default 10^6; 1000 with --quick unless --sizes is given).")
    Integer maxList;

    @Option(names = "--reps", paramLabel = "N", description = "Timed calls per cell at most (default 30; 5 with --quick).")
    Integer reps;

    @Option(names = "--runs", paramLabel = "N", defaultValue = "1",
            description = "Times each cell is measured, a full GC between (default 1): the samples are pooled and each "
                    + "run's median is in the cell's note with their range; 3 for headline figures.")
    int runs;

    @Option(names = "--warmup", paramLabel = "N", description = "Untimed calls per cell first (default 5; 2 with --quick).")
    Integer warmup;

    @Option(names = "--settle", paramLabel = "SECONDS",
            description = "After a cell's warm-up calls, more of them until the JIT compilers of both JVMs are quiet (under "
                    + "2%% of a second's calls), for at most this long (default 20; 0 with --quick, and 0 never waits); in "
                    + "the matrix workload, rounds of a product per row until those of the manager's and the workers' JVMs are. "
                    + "A cell timed while they still work measures them: its note then says how long they worked.")
    Integer settle;

    @Option(names = "--budget", paramLabel = "SECONDS",
            description = "Time per cell for its slowest protocol (default 10; 2 with --quick): every protocol of a cell gets as many "
                    + "samples as the slowest fits in it; a call expected (from the previous size's p10) to take over a quarter of it is skipped.")
    Integer budget;

    @Option(names = "--heap", paramLabel = "SIZE", defaultValue = "2g", description = "Server JVM -Xms and -Xmx. Default: ${DEFAULT-VALUE}.")
    String heap;

    @Option(names = "--xss", paramLabel = "SIZE",
            description = "Thread stack for the server JVM (-Xss) and the client's measuring thread; default: the JVM's (1 MiB).")
    String xss;

    @Option(names = "--pin-max", paramLabel = "N", defaultValue = "1000",
            description = "Cells up to this size run with both JVMs pinned to CPU 0 (taskset); -1 never pins. Default: ${DEFAULT-VALUE}.")
    int pinMax;

    @Option(names = "--phases", description = "Instead of the sweep: the phase breakdown of one call (serialize, send, "
            + "deserialize, dispatch, and back) for a list of --phase-size nodes over each protocol, as phases.md/.csv/.png. "
            + "Protocols default to soap,grpc,adaptive,oos,socket; --reps calls each (default 300; 40 with --quick).")
    boolean phases;

    @Option(names = "--phase-size", paramLabel = "N", defaultValue = "1000",
            description = "List nodes per call in the phase breakdown. Default: ${DEFAULT-VALUE}.")
    int phaseSize;

    @Option(names = "--jmh", arity = "0..1", paramLabel = "REGEX", fallbackValue = "io.switchboard.bench.jmh.",
            description = "Run the JMH micro-benchmarks (encoders, policy decision) whose names match REGEX instead of the sweep; "
                    + "JMH options follow after --, e.g. --jmh Negotiation -- -f 1 -wi 3 -i 5 -prof gc.")
    String jmh;

    @Parameters(paramLabel = "JMH_OPTION", arity = "0..*", description = "With --jmh: JMH's own options, after --.")
    List<String> jmhOptions = new ArrayList<>();

    @Spec
    CommandSpec spec;

    @Override
    public Integer call() throws Exception {
        if (jmh != null) {
            return io.switchboard.bench.jmh.JmhLauncher.run(jmh, jmhOptions);
        }
        if (!jmhOptions.isEmpty()) {
            throw new picocli.CommandLine.ParameterException(spec.commandLine(),
                    "unexpected arguments " + jmhOptions + " (JMH options go after --jmh REGEX --)");
        }
        System.setProperty("java.awt.headless", "true");
        if (phases) {
            System.setProperty("switchboard.phases", "true");   // read once, when the transports first touch PhaseMarks
            if (!PhaseMarks.ENABLED) {
                throw new picocli.CommandLine.ParameterException(spec.commandLine(), "--phases needs phase marks on in this JVM, "
                        + "but they were already read as off: run it in a JVM of its own or with -Dswitchboard.phases=true");
            }
            if (!spec.commandLine().getParseResult().hasMatchedOption("--protocols")) {
                protocols = List.of("soap", "grpc", "adaptive", "oos", "socket");
            }
        }
        System.setProperty("sun.rmi.transport.tcp.responseTimeout", Integer.toString(Sweep.CALL_TIMEOUT_MILLIS));
        PrintStream stdout = System.out;
        Path dir = out != null ? out : defaultOut();
        Files.createDirectories(dir);
        Sweep.Config config = new Sweep.Config(sizes(), or(warmup, 5, 2), or(reps, 30, 5),
                Duration.ofSeconds(or(budget, 10, 2)), pinMax, Duration.ofMillis(or(null, 10_000, 1_000)), Math.max(1, runs),
                Duration.ofSeconds(or(settle, 20, 0)));
        List<String> serverFlags = new ArrayList<>(List.of("-Xms" + heap, "-Xmx" + heap, "-XX:+UseG1GC"));
        if (phases) {
            serverFlags.add("-Dswitchboard.phases=true");
            if (xss == null) {
                xss = "16m";   // Java serialization of a 1,000-node list overflows the default stack
            }
        }
        if (xss != null) {
            serverFlags.add("-Xss" + xss);
        }
        serverFlags.addAll(ServerProcess.pageSizeFlags(java.lang.management.ManagementFactory.getRuntimeMXBean()
                .getInputArguments()));   // huge pages for both sides, or for neither
        // the protocols' switches (the library shortcuts of docs/architecture.md, the tcp server's
        // event loops): the server runs as the client does
        System.getProperties().stringPropertyNames().stream().sorted()
                .filter(k -> k.startsWith("switchboard.grpc.") || k.startsWith("switchboard.soap.")
                        || k.startsWith("switchboard.tcp."))
                .forEach(k -> serverFlags.add("-D" + k + "=" + System.getProperty(k)));
        List<String> notes = new ArrayList<>();
        String clientFlags = Report.Machine.currentClientFlags();
        if (!clientFlags.contains("-Xmx")) {
            notes.add("the client JVM has no explicit heap; for comparable runs set SWITCHBOARD_JAVA_OPTS=\"-Xms2g -Xmx2g -XX:+UseG1GC\"");
        }
        String loadStart = Report.Machine.loadAverage();
        int cpus = Runtime.getRuntime().availableProcessors();   // before the sweep pins this JVM
        stdout.println("bench: load average " + loadStart + ", " + Runtime.getRuntime().availableProcessors()
                + " CPUs; results in " + dir.toAbsolutePath());
        List<Cell> cells;
        String precedingTables = null;
        List<MatrixBench.Result> matrixResults;
        List<AsyncBench.Row> asyncRows;
        boolean leftProcess = false;   // a local call the failsafe moved to SOAP: the local figures would be wrong
        List<Peer> peers = new ArrayList<>();
        SwitchboardPeer.Connection switchboard = null;
        List<String> serverArgs = List.of();
        MutualTlsPeer.Identities identities = null;
        if (protocols.stream().anyMatch(MutualTlsPeer::isRow)) {
            // made here and handed to the server by path, so that both JVMs trust the same authority
            TestCertificates certs = TestCertificates.get();
            identities = new MutualTlsPeer.Identities(certs.client(), certs.dnsClient(), certs.clientWithoutKey());
            serverArgs = List.of("--tls", certs.serverKeyStore().toString(), certs.trustStore().toString());
        }
        try (ServerProcess server = ServerProcess.start(serverFlags, dir.resolve("bench-server.log"), serverArgs)) {
            for (String name : protocols) {
                switch (name) {
                    case "socket":
                        peers.add(new RawSocketPeer(Integer.parseInt(server.get("socket"))));
                        break;
                    case RawSocketPeer.UNIX_NAME:
                        peers.add(new RawSocketPeer(java.nio.file.Path.of(server.get(RawSocketPeer.UNIX_NAME))));
                        break;
                    case "oos":
                        peers.add(new ObjectStreamPeer(Integer.parseInt(server.get("oos"))));
                        break;
                    case "rmi":
                        peers.add(new RmiPeer(server.get("rmi")));
                        break;
                    case ForyPeer.NAME:
                        peers.add(new ForyPeer(Integer.parseInt(server.get(ForyPeer.NAME))));
                        break;
                    case PlainGrpcPeer.NAME:
                    case PlainGrpcPeer.DIRECT_NAME:
                        peers.add(new PlainGrpcPeer(Integer.parseInt(server.get(name)), name.equals(PlainGrpcPeer.DIRECT_NAME)));
                        break;
                    case BareAxis2Peer.NAME:
                        peers.add(new BareAxis2Peer(Integer.parseInt(server.get(BareAxis2Peer.NAME))));
                        break;
                    case LocalPeer.NAME:
                        peers.add(LocalPeer.start());
                        break;
                    case MutualTlsPeer.PLAIN:
                    case MutualTlsPeer.AUTHZ:
                        peers.add(MutualTlsPeer.connect(name, MutualTlsPeer.parse(server.get(name)), identities));
                        break;
                    default:
                        if (switchboard == null) {
                            switchboard = SwitchboardPeer.connect(server.get("registry"));
                        }
                        try {
                            peers.add(switchboard.peer(name));
                        } catch (IllegalArgumentException e) {
                            notes.add(name + ": not measured; it is neither a protocol on the class path " + Protocols.names()
                                    + " nor a selection policy the meta-stub knows (" + e.getMessage() + ")");
                        }
                }
            }
            notes.forEach(n -> stdout.println("bench: " + n));
            if (phases) {
                return runPhases(stdout, dir, server, peers, notes, serverFlags, clientFlags, loadStart, cpus);
            }
            Sweep sweep = new Sweep(config, peers, server);
            MatrixBench matrix = matrixBench(server, dir);
            AsyncBench async = asyncBench(peers);
            int steps = (config.sizes().isEmpty() ? 0 : sweep.cellCount()) + (matrix == null ? 0 : matrix.cellCount())
                    + (async == null ? 0 : async.cellCount());
            try (ProgressBar progress = Progress.open("bench", steps)) {
                cells = config.sizes().isEmpty() ? List.of() : runWithStack(() -> sweep.run(progress));
                asyncRows = async == null ? List.of() : async.run(progress);
                matrixResults = matrix == null ? List.of() : matrix.run(progress);
            }
            notes.addAll(sweep.notes());
            precedingTables = sweep.precedingTables();
            for (Peer p : peers) {
                if (p instanceof LocalPeer lp && lp.wrongProtocol() != null) {
                    notes.add("local: a call did not stay in process (" + lp.wrongProtocol() + ")");
                    leftProcess = true;
                }
            }
        } finally {
            peers.forEach(Peer::close);
            if (switchboard != null) {
                switchboard.close();
            }
        }
        Report.Machine machine = new Report.Machine(Report.Machine.now(), cpus,
                Report.Machine.currentCpuModel(), loadStart, Report.Machine.loadAverage(), Report.Machine.currentJava(), clientFlags,
                String.join(" ", serverFlags),
                String.format("%d untimed warm-up calls%s, then up to %d timed calls within %d s for the slowest protocol, "
                        + "the same number for each%s (after %d s of small calls over every protocol before the first cell%s)",
                        config.warmup(), config.settle().isZero() ? ""
                                : " and more until the JIT compilers of both JVMs are quiet (at most " + config.settle().toSeconds() + " s)",
                        config.reps(), config.budget().toSeconds(),
                        config.runs() > 1 ? ", in " + config.runs() + " runs with a full GC between" : "", config.warmupTime().toSeconds(),
                        config.settle().isZero() ? "" : ", and more until the JIT compilers were quiet, at most "
                                + Sweep.WARM_UP_SETTLE_FACTOR * config.settle().toSeconds() + " s more"),
                pinMax < 0 ? "none" : "cells of up to " + pinMax + " elements (and the empty call): both JVMs pinned to CPU 0 "
                        + "with taskset; larger cells unpinned");
        String asyncTable = null;
        if (!asyncRows.isEmpty()) {
            stdout.println(AsyncBench.writeAll(asyncRows, machine, reproduce(), asyncConfig(), dir));
            stdout.println("bench: wrote " + dir.resolve("async.csv") + " and " + dir.resolve("async.md"));
            asyncTable = AsyncBench.table(asyncRows);
        }
        if (!cells.isEmpty()) {
            stdout.println(new Report(cells, machine, reproduce(), notes, asyncTable, precedingTables).writeAll(dir));
            stdout.println("bench: wrote " + dir.resolve("bench.csv") + ", " + dir.resolve("bench.md") + " and plots");
        }
        if (!matrixResults.isEmpty()) {
            stdout.println(new MatrixReport(matrixResults, machine, reproduce(), matrixWorkers,
                    String.join(" ", MatrixBench.workerFlags(quick))).writeAll(dir));
            stdout.println("bench: wrote " + dir.resolve("matrix.csv") + ", " + dir.resolve("matrix.md") + " and "
                    + dir.resolve("matrix.png"));
        }
        boolean wrong = cells.stream().anyMatch(c -> c.note() != null && c.note().startsWith("wrong answer"))
                || matrixResults.stream().anyMatch(r -> r.note() != null && r.note().startsWith("wrong answer"))
                || AsyncBench.anyWrong(asyncRows) || leftProcess;
        return wrong ? 2 : 0;
    }

    /** {@code --phases}: the phase breakdown of one call instead of the sweep. */
    private int runPhases(PrintStream stdout, Path dir, ServerProcess server, List<Peer> peers, List<String> notes,
            List<String> serverFlags, String clientFlags, String loadStart, int cpus) throws Exception {
        int calls = or(reps, 300, 40);
        int warm = or(warmup, 200, 20);
        Payload payload = Payload.of(Workload.LIST, phaseSize);
        PhaseBreakdown.Recorder recorder = PhaseBreakdown.Recorder.install();
        PhaseBreakdown breakdown = new PhaseBreakdown(peers, server, recorder);
        List<PhaseBreakdown.Timing> timings;
        try (ProgressBar progress = Progress.open("phases", calls)) {
            timings = runWithStack(() -> breakdown.run(payload, warm, calls, progress));
        } finally {
            PhaseMarks.install(null);
        }
        notes.addAll(breakdown.notes());
        if (peers.stream().noneMatch(p -> p.name().equals("rmi"))) {
            notes.add("rmi: not shown; Java RMI serializes inside its own transport, where no phase can be marked "
                    + "without changing it (oos shows Java serialization's phases)");
        }
        Report.Machine machine = new Report.Machine(Report.Machine.now(), cpus, Report.Machine.currentCpuModel(), loadStart,
                Report.Machine.loadAverage(), Report.Machine.currentJava(), clientFlags, String.join(" ", serverFlags),
                String.format("%d untimed calls per protocol, then %d rounds of one call per protocol, interleaved", warm, calls),
                "none (both JVMs unpinned)");
        String md = new PhaseReport(timings, machine, reproduce(), notes, "LinkEntry list, " + phaseSize + " nodes")
                .writeAll(dir);
        stdout.println(md);
        stdout.println("bench: wrote " + dir.resolve("phases.csv") + ", " + dir.resolve("phases.md") + " and "
                + dir.resolve("phases.png"));
        return 0;
    }

    /** The matrix workload of this run, or null when it is not asked for or none of its rows is among --protocols. */
    private MatrixBench matrixBench(ServerProcess server, Path dir) {
        if (!workloads.contains("matrix")) {
            return null;
        }
        List<String> policies = protocols.stream().filter(MatrixBench::isRow).collect(Collectors.toList());
        if (policies.isEmpty()) {
            return null;
        }
        MatrixBench.Config c = new MatrixBench.Config(matrixSizes != null ? matrixSizes : MatrixBench.defaultSizes(quick),
                matrixWorkers, policies, or(reps, 5, 2), Duration.ofSeconds(or(budget, 40, 10)), MatrixBench.workerFlags(quick),
                Duration.ofSeconds(or(settle, 20, 0)));
        return new MatrixBench(c, server.get("registry"), server.get("secret"), dir);
    }

    /** The async workload of this run over the Switchboard protocols among the peers, or null when there is none. */
    private AsyncBench asyncBench(List<Peer> peers) {
        if (!workloads.contains("async")) {
            return null;
        }
        Map<String, AsyncBench.Target> stubs = new LinkedHashMap<>();
        for (Peer p : peers) {
            if (p instanceof SwitchboardPeer sp && Protocols.names().contains(p.name())) {
                stubs.put(p.name(), AsyncBench.Target.of(sp.stub()));   // a protocol pinned on each call; policies would only pick one of these
            } else if (p instanceof MutualTlsPeer mtls) {
                stubs.put(p.name(), AsyncBench.Target.of(mtls.stub()));
            } else if (p instanceof LocalPeer lp) {
                stubs.put(p.name(), AsyncBench.Target.of(lp.stub()));
            } else if (p instanceof PlainGrpcPeer plain && p.name().equals(PlainGrpcPeer.NAME)) {
                stubs.put(p.name(), plain);   // the reference: grpc-java alone, default executors
            }
        }
        return stubs.isEmpty() ? null : new AsyncBench(asyncConfig(), stubs);
    }

    private AsyncBench.Config asyncConfig() {
        Duration cell = Duration.ofMillis(or(asyncMillis, 3000, 400));
        return new AsyncBench.Config(asyncSizes != null ? asyncSizes : quick ? List.of(10) : List.of(10, 10_000), cell, cell);
    }

    private Map<Workload, List<Integer>> sizes() {
        Map<Workload, List<Integer>> result = new LinkedHashMap<>();
        for (String key : workloads) {
            if (key.equals("matrix") || key.equals("async")) {
                continue;   // not sweep workloads: MatrixBench and AsyncBench run them
            }
            Workload w = Workload.of(key);
            Integer givenMax = w == Workload.LIST ? maxList : maxDoubles;
            int max = givenMax != null ? givenMax : quick && sizes == null ? (w == Workload.LIST ? 1000 : 10_000) : w.largest();
            List<Integer> chosen = w == Workload.EMPTY || sizes == null ? w.sizes(max)
                    : sizes.stream().filter(n -> n > 0 && n <= Math.min(max, w.largest())).collect(Collectors.toList());
            result.put(w, chosen);
        }
        return result;
    }

    private int or(Integer given, int full, int quickValue) {
        return given != null ? given : quick ? quickValue : full;
    }

    /** Runs the sweep on a thread with the requested stack, so RMI and ObjectOutputStream meet the same limit on both sides. */
    private <T> T runWithStack(Callable<T> sweep) throws Exception {
        AtomicReference<Object> result = new AtomicReference<>();
        Thread t = new Thread(null, () -> {
            try {
                result.set(sweep.call());
            } catch (Exception | Error e) {
                result.set(e);
            }
        }, "bench", xss == null ? 0 : parseSize(xss));
        t.start();
        t.join();
        if (result.get() instanceof Exception) {
            throw (Exception) result.get();
        }
        if (result.get() instanceof Error) {
            throw (Error) result.get();
        }
        @SuppressWarnings("unchecked")
        T value = (T) result.get();
        return value;
    }

    static long parseSize(String s) {
        String t = s.trim().toLowerCase(java.util.Locale.ROOT);
        long unit = t.endsWith("g") ? 1L << 30 : t.endsWith("m") ? 1L << 20 : t.endsWith("k") ? 1L << 10 : 1;
        return Long.parseLong(unit == 1 ? t : t.substring(0, t.length() - 1)) * unit;
    }

    /** The command line that repeats this run. */
    private String reproduce() {
        List<String> args = spec.commandLine().getParseResult().originalArgs();
        int i = args.indexOf("bench");
        List<String> own = i >= 0 ? args.subList(i + 1, args.size()) : args;
        String env = System.getenv("SWITCHBOARD_JAVA_OPTS");
        return (env == null || env.isBlank() ? "" : "SWITCHBOARD_JAVA_OPTS=\"" + env + "\" ") + "./switchboard bench"
                + (own.isEmpty() ? "" : " " + String.join(" ", own));
    }

    /** {@code results/} at the repository root when run from a build tree, else in the working folder. */
    private static Path defaultOut() {
        try {
            // bench/target/classes, or cli/target/lib/switchboard-bench-*.jar under the launcher: up to the checkout
            Path code = Path.of(BenchCommand.class.getProtectionDomain().getCodeSource().getLocation().toURI());
            for (Path root = code.getParent(); root != null; root = root.getParent()) {
                if (Files.exists(root.resolve("pom.xml")) && Files.exists(root.resolve("bench/pom.xml"))) {
                    return root.resolve("results");
                }
            }
        } catch (URISyntaxException | RuntimeException e) {
            // fall through to the working folder
        }
        return Path.of("results");
    }
}
