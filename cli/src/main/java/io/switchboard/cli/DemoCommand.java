package io.switchboard.cli;

import io.switchboard.bench.ChildJvm;
import io.switchboard.components.echo.EchoComponent;
import io.switchboard.components.echo.EchoStub;
import io.switchboard.components.echo.EchoService;
import io.switchboard.components.echo.LinkEntry;
import io.switchboard.metastub.CallRecord;
import io.switchboard.metastub.MetaStub;
import io.switchboard.protocol.CallOptions;
import io.switchboard.protocol.spi.Protocols;
import io.switchboard.registry.ComponentEntry;
import io.switchboard.server.ComponentServer;
import io.switchboard.registry.server.RegistryServer;
import io.switchboard.client.Switchboard;
import java.io.PrintStream;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.IdentityHashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.Callable;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.function.BooleanSupplier;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;

/**
 * {@code ./switchboard demo}: a tour of the components on loopback around one registry. The echo
 * component exported on every protocol and called by a client that knows only the registry's
 * address, every answer checked, then its gRPC listener stopped to show calls falling back to
 * SOAP; matrix worker JVMs multiplying by two algorithms ({@link MatrixDemo}); a simulator and an
 * optimizer fitting known parameters, with a progress callback ({@link SimulationDemo}); the
 * Python echo component, on the switchboard package ({@link PythonDemo}: it makes the venv when
 * missing; {@code --no-python} skips it); one summary table. Exits with 1
 * only if some answer is wrong; the child processes end with it (also on Ctrl-C).
 */
@Command(name = "demo", mixinStandardHelpOptions = true,
        description = "A tour on loopback: a registry, the echo component (with a fallback to SOAP), matrix worker JVMs, "
                + "a simulator and an optimizer, the Python echo component (making its venv if missing); each call's "
                + "protocol and why.")
final class DemoCommand implements Callable<Integer> {
    @Option(names = "--no-python", description = "Skip the Python stage (which makes the project's "
            + "Python venv from PyPI the first time).")
    private boolean noPython;

    /**
     * How long the echo stage's client leaves a failed protocol out. The stage shows that the
     * calls after the first fallback go to SOAP directly, which holds only while they come within
     * the back-off; the default's 2 s is shorter than a 100,000-double SOAP call on a starved machine.
     */
    static final Duration FAILED_PROTOCOL_BACKOFF = Duration.ofMinutes(5);

    /** A pause between the two calls after the gRPC listener stops; a test sets it past the default back-off. */
    Duration pauseAfterFirstFallback = Duration.ZERO;

    private final PrintStream out = System.out;
    private final List<String[]> rows = new ArrayList<>();
    private long warmUpCalls;
    private long exactBeforeStop;
    private long callsBeforeStop;

    @Override
    public Integer call() {
        out.println("Switchboard demo: a registry, the echo component, " + MatrixDemo.WORKERS + " matrix worker JVMs, a simulator "
                + "and an optimizer, and a Python component, on loopback");
        out.println();
        String secret = UUID.randomUUID().toString();
        List<DemoStageResult> stages = new ArrayList<>();
        ScratchDirectory logs = ScratchDirectory.create("switchboard-demo-");
        Path logDir = logs.path();
        try (RegistryServer registry = RegistryServer.builder().secret(secret).start();
             ChildJvm children = new ChildJvm()) {
            // the worker JVMs start now and bind themselves while the echo stage runs
            MatrixDemo matrix = new MatrixDemo(out);
            matrix.startWorkers(children, registry.endpoint(), secret, logDir);
            out.println("registry   " + registry.endpoint());
            out.println("           writes need a shared secret (generated for this run, not shown)");
            out.println("children   " + MatrixDemo.WORKERS + " matrix worker JVMs starting (pids "
                    + matrix.workerPids().stream().map(String::valueOf).collect(java.util.stream.Collectors.joining(", "))
                    + "); their logs go to " + logDir
                    + " (removed at the end unless a stage fails)");
            out.println();
            out.println("== echo: one component on every protocol, each call's protocol and why ==");
            stages.addAll(echoStage(registry, secret));
            try {
                stages.addAll(matrix.run(registry.endpoint(), logDir));
            } catch (Exception e) {
                out.println("matrix stage FAILED: " + e);
                out.println();
                stages.add(new DemoStageResult("matrix", 0, Map.of(), 0, false, "failed: " + e.getClass().getSimpleName()));
            }
            stages.add(new SimulationDemo(out).run(registry.endpoint(), secret));
            stages.add(new PythonDemo(out).run(children, registry.endpoint(), secret, logDir, noPython));
        } catch (Exception e) {
            out.println("demo FAILED: " + e);
            stages.add(new DemoStageResult("demo", 0, Map.of(), 0, false, "failed: " + e.getClass().getSimpleName()));
        }
        printSummary(stages);
        boolean failed = stages.stream().anyMatch(s -> Boolean.FALSE.equals(s.ok()));
        if (failed) {
            logs.keep();
            out.println("the child processes' logs are kept in " + logDir);
        }
        logs.close();   // the child processes have ended: ChildJvm closed above
        return failed ? 1 : 0;
    }

    private void printSummary(List<DemoStageResult> stages) {
        out.println("== summary ==");
        String format = "%-22s %6s  %-28s %9s  %-8s %s%n";
        out.printf(format, "stage", "calls", "attempts per protocol", "fallbacks", "answers", "note");
        for (DemoStageResult s : stages) {
            out.printf(format, s.stage(), s.calls(), s.attemptsPerProtocol(), s.fallbacks(), s.answers(), s.note());
        }
        out.println("(calls: the demo's own client calls that were answered; the workers' and the optimizer's calls are "
                + "listed in their stages)");
    }

    /** The echo stage: a table of calls, then the gRPC listener stopped to show the fallback. */
    List<DemoStageResult> echoStage(RegistryServer registry, String secret) {
        List<CallRecord> records = new CopyOnWriteArrayList<>();
        int stoppedAt = -1;
        try (ComponentServer server = ComponentServer.builder().registry(registry.endpoint(), secret)
                .protocols(networkProtocols()).drain(Duration.ZERO, ComponentServer.DEFAULT_DRAIN_TIMEOUT).build()) {
            EchoService echoImpl = new EchoService();
            ComponentEntry entry = server.export(EchoComponent.skeleton(echoImpl));
            out.println("exported   " + entry.name() + " on " + entry.endpoints().size() + " protocol(s):");
            entry.endpoints().forEach(e -> out.println(String.format("             %-6s %s", e.protocol(), e.address())));
            out.println("wsdl       " + entry.wsdlUrl());

            try (Switchboard sb = Switchboard.builder(registry.endpoint()).listener(records::add)
                    .backoff(FAILED_PROTOCOL_BACKOFF, FAILED_PROTOCOL_BACKOFF).connect()) {
                EchoStub echo = sb.lookup(EchoComponent.DESCRIPTOR, EchoComponent::stub);
                out.println("looked up  " + entry.name() + " knowing only the registry's address");
                warmUp(echo, entry);
                warmUpCalls = echoImpl.calls();
                records.clear();
                out.println();

                check(records, "empty()", () -> {
                    echo.empty();
                    return true;
                });
                double[] edges = {0.0, -0.0, Double.NaN, Double.POSITIVE_INFINITY, Double.NEGATIVE_INFINITY,
                    Double.MIN_VALUE, Double.MAX_VALUE, 0.1, 1.0 / 3};
                check(records, "echoDoubles(NaN, -0.0, ±Inf, MIN_VALUE, ...)", () -> sameBits(edges, echo.echoDoubles(edges)));
                check(records, "echoDoubles(empty array)", () -> {
                    double[] back = echo.echoDoubles(new double[0]);
                    return back != null && back.length == 0;
                });
                check(records, "echoDoubles(null)", () -> echo.echoDoubles(null) == null);
                double[] big = new double[300_000];   // 2.4 MB: over the 2 MiB the policies send over tcp, so it goes over gRPC
                for (int i = 0; i < big.length; i++) {
                    big[i] = Math.sin(i) * 1e6;
                }
                check(records, "echoDoubles(300,000 values)", () -> sameBits(big, echo.echoDoubles(big)));
                check(records, "echoList(10 nodes)", () -> sameList(list(10), echo.echoList(list(10))));
                check(records, "echoList(100,000 nodes)", () -> sameList(list(100_000), echo.echoList(list(100_000))));
                check(records, "echoList(cycle of 3 nodes)", () -> {
                    LinkEntry head = list(3);
                    head.getNextLink().getNextLink().setNextLink(head);
                    LinkEntry back = echo.echoList(head);
                    return back.getNextLink().getNextLink().getNextLink() == back;
                });
                if (entry.endpoint("grpc").isPresent()) {
                    server.stopProtocol("grpc");
                    stoppedAt = records.size();
                    exactBeforeStop = rows.stream().filter(r -> r[4].equals("exact")).count();
                    callsBeforeStop = callRows().size();
                    rows.add(new String[] {"-- the gRPC listener is stopped now; a protocol that fails is left out for "
                        + FAILED_PROTOCOL_BACKOFF.toMinutes() + " min --", "", "", "", ""});
                    check(records, "echoDoubles(300,000 values)", () -> sameBits(big, echo.echoDoubles(big)));
                    pause(pauseAfterFirstFallback);
                    check(records, "echoList(1,000 nodes)", () -> sameList(list(1_000), echo.echoList(list(1_000))));
                }
            }
            printTable();
            out.println();
            Map<String, Integer> perProtocol = new LinkedHashMap<>();
            records.forEach(r -> perProtocol.merge(r.protocol(), 1, Integer::sum));
            List<String[]> calls = callRows();
            long exact = rows.stream().filter(r -> r[4].equals("exact")).count();
            long fallbacks = records.stream().filter(CallRecord::fallback).count();
            out.println("summary    " + calls.size() + " calls, " + exact + " answered exactly, " + (calls.size() - exact)
                    + " not; attempts per protocol " + perProtocol + ", " + fallbacks + " fallback(s) to SOAP; "
                    + "the component ran " + (echoImpl.calls() - warmUpCalls) + " of them once each");
            out.println();
            if (stoppedAt < 0) {
                return List.of(DemoStageResult.of("echo", records, exact == calls.size(), "gRPC not on the class path"));
            }
            return List.of(DemoStageResult.of("echo", records.subList(0, stoppedAt), exactBeforeStop == callsBeforeStop, ""),
                    DemoStageResult.of("echo, gRPC stopped", records.subList(stoppedAt, records.size()),
                            exact - exactBeforeStop == calls.size() - callsBeforeStop, "the failsafe's SOAP retries"));
        }
    }

    private List<String[]> callRows() {
        return rows.stream().filter(r -> !r[0].startsWith("  then") && !r[0].startsWith("--")).toList();
    }

    /**
     * Every protocol on the class path but the in-process ones ({@code local}), SOAP last as by
     * default: the client runs in this JVM and would take {@code local} for every call (cli
     * carries it for the bench), and the demo shows the choice between the network protocols.
     */
    static List<String> networkProtocols() {
        List<String> network = new ArrayList<>();
        Protocols.all().forEach((name, provider) -> {
            if (!provider.inProcessOnly() && !name.equals("soap")) {
                network.add(name);
            }
        });
        network.add("soap");
        return network;
    }

    /**
     * A few calls pinned to each protocol, so that the adaptive policy starts from this link's
     * figures rather than its priors (and the JIT has seen both paths).
     */
    private void warmUp(EchoStub echo, ComponentEntry entry) {
        List<String> protocols = entry.endpoints().stream().map(e -> e.protocol()).toList();
        for (int i = 0; i < 15; i++) {
            for (String p : protocols) {
                EchoStub pinned = echo.withOptions(CallOptions.DEFAULT.with(MetaStub.PROTOCOL, p));
                pinned.empty();
                pinned.echoDoubles(new double[i % 3 == 0 ? 20_000 : 10]);
            }
        }
        out.println("warmed up  15 rounds of small and 20,000-double calls pinned to each of " + protocols
                + ", so adaptive starts from this link's figures");
    }

    private void check(List<CallRecord> records, String label, BooleanSupplier call) {
        int before = records.size();
        boolean ok;
        String result;
        try {
            ok = call.getAsBoolean();
            result = ok ? "exact" : "WRONG";
        } catch (RuntimeException e) {
            result = "FAILED: " + e.getMessage();
        }
        // a call that fell back has two records: show the failed attempt, then the one that answered
        for (int i = before; i < records.size(); i++) {
            CallRecord r = records.get(i);
            boolean last = i == records.size() - 1;
            rows.add(new String[] {i == before ? label : "  then", r.protocol(), r.reason(),
                String.format("%.1f ms", r.latency().toNanos() / 1e6),
                last ? result : "failed: " + abbreviate(r.error())});
        }
        if (records.size() == before) {
            rows.add(new String[] {label, "-", "-", "-", result});
        }
    }

    private static void pause(Duration d) {
        try {
            Thread.sleep(d.toMillis());
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }

    private static String abbreviate(String s) {
        return s == null || s.length() <= 60 ? s : s.substring(0, 57) + "...";
    }

    private void printTable() {
        String format = "%-46s %-8s %-48s %10s  %s%n";
        out.printf(format, "call", "protocol", "why", "time", "result");
        for (String[] r : rows) {
            out.printf(format, (Object[]) r);
        }
    }

    private static boolean sameBits(double[] a, double[] b) {
        if (b == null || a.length != b.length) {
            return false;
        }
        for (int i = 0; i < a.length; i++) {
            if (Double.doubleToLongBits(a[i]) != Double.doubleToLongBits(b[i])) {
                return false;
            }
        }
        return true;
    }

    static LinkEntry list(int n) {
        LinkEntry head = null;
        for (int i = n - 1; i >= 0; i--) {
            LinkEntry e = new LinkEntry();
            e.setLlong(i);
            e.setSshort((short) i);
            e.setIint(i);
            e.setFfloat(i / 2f);
            e.setDdouble(i / 3.0);
            e.setSstring("node " + i);
            e.setNextLink(head);
            head = e;
        }
        return head;
    }

    static boolean sameList(LinkEntry a, LinkEntry b) {
        IdentityHashMap<LinkEntry, Boolean> seen = new IdentityHashMap<>();
        while (a != null) {
            if (b == null || seen.put(a, true) != null) {
                return b != null;
            }
            if (a.getLlong() != b.getLlong() || a.getSshort() != b.getSshort() || a.getIint() != b.getIint()
                    || Float.compare(a.getFfloat(), b.getFfloat()) != 0 || Double.compare(a.getDdouble(), b.getDdouble()) != 0
                    || !a.getSstring().equals(b.getSstring())) {
                return false;
            }
            a = a.getNextLink();
            b = b.getNextLink();
        }
        return b == null;
    }
}
