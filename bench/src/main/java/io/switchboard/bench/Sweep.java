package io.switchboard.bench;

import java.io.IOException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.stream.Collectors;
import me.tongfei.progressbar.ProgressBar;

/**
 * Runs the measurement: for each workload and size, every protocol in turn, in a fresh order every
 * round (shuffled from a fixed seed, so that a noisy moment hits all of them alike and none always
 * follows another), first a warm-up, then timed round trips, each result checked against what was
 * sent. Every protocol of a cell gets the same number of samples, bounded by a count and the slowest
 * protocol's time budget; a cell whose single call is expected (from the previous size's p10) to take
 * more than a quarter of the budget is skipped, and so are the larger sizes of a protocol that failed,
 * each with the reason.
 *
 * <pre>{@code
 * Sweep sweep = new Sweep(config, peers, server);
 * List<Cell> cells = sweep.run(progressBar);
 * }</pre>
 */
public final class Sweep {
    /** No single call waits longer than this, whatever the protocol: a hang becomes a failed cell. */
    static final int CALL_TIMEOUT_MILLIS = 120_000;
    private static final int MIN_SAMPLES = 3;

    /**
     * What to measure.
     *
     * @param warmup     untimed calls at the start of each cell
     * @param reps       timed calls per cell at most
     * @param budget     time per cell and protocol
     * @param warmupTime small calls over every protocol before the first cell, for the JIT compiler
     * @param pinMaxSize cells up to this size run with both JVMs pinned to CPU 0 (small messages,
     *                   see shared/BENCHMARKING.md); -1 never pins
     * @param runs       times each cell is measured, a full GC between runs; the samples are pooled
     *                   and each run's median goes into the cell's note, so a headline figure has its range
     * @param settle     after a cell's warm-up calls, more of them until the JIT compilers of both JVMs
     *                   are quiet, for at most this long (zero: no wait)
     */
    public record Config(Map<Workload, List<Integer>> sizes, int warmup, int reps, Duration budget, int pinMaxSize,
                         Duration warmupTime, int runs, Duration settle) {
    }

    /** The compilers are quiet when they work less than this share of a slice of warm-up rounds. */
    static final double SETTLED_SHARE = 0.02;
    private static final long SLICE_NANOS = 1_000_000_000L;
    /** The warm-up before the first cell settles for at most this many times a cell's {@code settle}. */
    static final int WARM_UP_SETTLE_FACTOR = 3;

    private final Config config;
    private final List<Peer> peers;
    private final ServerProcess server;
    private final List<String> notes = new ArrayList<>();
    /** The pinned cells' round trips by the row called just before, in the order measured. */
    private final List<PrecedingRows> preceding = new ArrayList<>();
    private final int cpus = Runtime.getRuntime().availableProcessors();   // read before pinning shrinks it
    private boolean pinned;
    private boolean pinningWorks = true;

    Sweep(Config config, List<Peer> peers, ServerProcess server) {
        this.config = config;
        this.peers = peers;
        this.server = server;
    }

    /** Steps the progress bar will take: one per cell. */
    int cellCount() {
        return config.sizes().values().stream().mapToInt(List::size).sum() * peers.size();
    }

    /**
     * For each pinned cell (small calls, all rows on one CPU), a Markdown table of every row's
     * median round trip by the row called just before it; empty when no cell was pinned.
     */
    String precedingTables() {
        List<String> rows = peers.stream().map(Peer::name).toList();
        return preceding.stream().filter(p -> !p.isEmpty()).map(p -> p.markdown(rows))
                .collect(Collectors.joining("\n"));
    }

    /** Remarks for the report: pinning that could not be done, and the like. */
    List<String> notes() {
        return notes;
    }

    List<Cell> run(ProgressBar progress) throws IOException {
        warmUp(progress);
        List<Cell> cells = new ArrayList<>();
        for (Map.Entry<Workload, List<Integer>> e : config.sizes().entrySet()) {
            Workload w = e.getKey();
            Map<Peer, Cell> previous = new HashMap<>();
            for (int size : e.getValue()) {
                progress.setExtraMessage(w.key() + " " + Report.size(size));
                Payload payload = Payload.of(w, size);
                boolean pin = config.pinMaxSize() >= 0 && size <= config.pinMaxSize();
                pin(pin);
                System.gc();   // one cell's garbage must not be collected in the next one's timings
                server.gc();
                Map<Peer, State> active = new LinkedHashMap<>();
                for (Peer peer : peers) {
                    String skip = skipReason(previous.get(peer), size);
                    if (skip != null) {
                        previous.put(peer, Cell.skipped(w, size, peer.name(), skip));
                        progress.step();
                    } else {
                        active.put(peer, new State());
                    }
                }
                PrecedingRows before = pin ? new PrecedingRows(w, size) : null;
                if (before != null) {
                    preceding.add(before);
                }
                for (int run = 0; run < config.runs(); run++) {
                    if (run > 0) {
                        System.gc();
                        server.gc();
                    }
                    measure(payload, active, run == 0, before);
                }
                for (Map.Entry<Peer, State> a : active.entrySet()) {
                    previous.put(a.getKey(), a.getValue().toCell(a.getKey(), payload, pin, config.reps(), config.runs()));
                    progress.step();
                }
                peers.forEach(peer -> cells.add(previous.get(peer)));   // in the order the protocols were asked for
            }
        }
        pin(false);
        return cells;
    }

    /**
     * Before the first cell, small calls over every protocol for {@code warmupTime}, then on until
     * the JIT compilers of both JVMs are quiet (as a cell's settling judges it), for at most
     * {@link #WARM_UP_SETTLE_FACTOR} times {@code settle}: so that the first cells do not time the
     * JIT compiler. With a dozen rows' libraries (SOAP, Axis2, gRPC, RMI, Fory) both JVMs were
     * still compiling after 10 s and the cell's own 20 s, and the first cell was timed while the
     * compilers took most of its CPU.
     */
    private void warmUp(ProgressBar progress) {
        progress.setExtraMessage("warm-up");
        List<Payload> payloads = List.of(Payload.of(Workload.EMPTY, 0), Payload.of(Workload.DOUBLES, 1000),
                Payload.of(Workload.LIST, 100));
        long start = System.nanoTime();
        long end = start + config.warmupTime().toNanos();
        for (int round = 0; round < 2000 && System.nanoTime() < end; round++) {
            warmUpRound(payloads);
        }
        long settleEnd = System.nanoTime() + WARM_UP_SETTLE_FACTOR * config.settle().toNanos();
        untilQuiet(() -> warmUpRound(payloads), settleEnd, this::compiling);
        double seconds = (System.nanoTime() - start) / 1e9;
        if (seconds > config.warmupTime().toSeconds() + 1) {
            notes.add(String.format(java.util.Locale.ROOT, "the warm-up before the first cell went on until the JIT "
                    + "compilers were quiet: %.0f s in all", seconds));
        }
    }

    private void warmUpRound(List<Payload> payloads) {
        for (Peer peer : peers) {
            for (Payload p : payloads) {
                try {
                    peer.roundTrip(p);
                } catch (Exception | StackOverflowError e) {
                    // a failing protocol shows up, with its reason, in its first cell
                }
            }
        }
    }

    private String skipReason(Cell before, int size) {
        if (before == null) {
            return null;
        }
        if (!before.isMeasured()) {
            return before.status() == Cell.Status.FAILED
                    ? "skipped: failed at " + Report.size(before.size()) + " (" + before.note() + ")"
                    : before.note();
        }
        // from p10, not the median: a few slow samples (GC, a noisy neighbour) must not skip a protocol
        double expectedSeconds = before.p10Micros() / 1e6 * size / Math.max(1, before.size());
        double limit = config.budget().toMillis() / 1e3 / 4;
        if (expectedSeconds > limit) {
            return String.format("skipped: about %.1f s per call expected (p10 %.1f s at %s), over a quarter of the %d s budget",
                    expectedSeconds, before.p10Micros() / 1e6, Report.size(before.size()), config.budget().toSeconds());
        }
        return null;
    }

    /**
     * Warm-up, then timed rounds: each round calls every protocol once, in an order shuffled afresh
     * every round, so that no protocol always runs right after another. A rotation (A B C, B C A,
     * C A B) did not do that: it kept the cycle, so each protocol always followed the same one and
     * paid for what that one left running (a row right after the raw socket, itself after SOAP and
     * bare Axis2, was 10-20% slower than the same calls one place further on). Every protocol gets
     * the same number of samples: the rounds stop at {@code reps}, or once the slowest protocol has
     * used its time budget (after a few samples each).
     */
    private void measure(Payload payload, Map<Peer, State> active, boolean warmUp, PrecedingRows before) {
        long budget = config.budget().toNanos();
        List<Map.Entry<Peer, State>> order = new ArrayList<>(active.entrySet());
        int n = order.size();
        java.util.Random shuffle = new java.util.Random(n);   // the same orders in every run of the same rows
        order.forEach(a -> a.getValue().startRun());
        for (int r = 0; warmUp && r < config.warmup(); r++) {
            java.util.Collections.shuffle(order, shuffle);
            for (int i = 0; i < n; i++) {
                Map.Entry<Peer, State> a = order.get(i);
                State s = a.getValue();
                if (s.failure == null && s.elapsed < budget / 2) {
                    s.call(a.getKey(), payload, false);
                }
            }
        }
        String unsettled = warmUp ? settle(order, payload, shuffle) : null;
        order.forEach(a -> a.getValue().countWays(a.getKey(), true));   // the timed calls only
        long compiledBefore = compileMillis();
        long timedStart = System.nanoTime();
        int minSamples = Math.min(MIN_SAMPLES, config.reps());
        String last = null;   // the row called just before, across rounds
        for (int r = 0; r < config.reps(); r++) {
            boolean any = false;
            java.util.Collections.shuffle(order, shuffle);
            for (int i = 0; i < n; i++) {
                Map.Entry<Peer, State> a = order.get(i);
                State s = a.getValue();
                if (s.failure == null) {
                    long t = s.call(a.getKey(), payload, true);
                    if (t >= 0 && before != null && last != null) {
                        before.add(a.getKey().name(), last, t);
                    }
                    last = a.getKey().name();
                    any = true;
                }
            }
            if (!any || (r + 1 >= minSamples && order.stream().anyMatch(a -> a.getValue().failure == null
                    && a.getValue().elapsed >= budget))) {
                break;
            }
        }
        order.forEach(a -> a.getValue().countWays(a.getKey(), false));
        order.forEach(a -> a.getValue().endRun());
        long compiled = compileMillis() - compiledBefore;
        long timedMillis = (System.nanoTime() - timedStart) / 1_000_000L;
        String jit = compiled > SETTLED_SHARE * timedMillis
                ? "JIT compilers busy " + compiled + " ms of the " + timedMillis + " ms timed (both JVMs)" : null;
        String jitNote = joinNotes(unsettled, jit);
        if (jitNote != null) {
            order.forEach(a -> a.getValue().jitNote = jitNote);
        }
        for (Map.Entry<Peer, State> a : active.entrySet()) {
            State s = a.getValue();
            if (s.failure == null) {
                try {
                    s.wireBytes = a.getKey().requestBytes(payload);
                } catch (Exception | StackOverflowError e) {
                    s.wireNote = "wire bytes not measured: " + describe(e);
                }
            }
        }
    }

    /**
     * Warm-up rounds, a second at a time, until the JIT compilers of both JVMs worked less than
     * {@value #SETTLED_SHARE} of a second's rounds, or {@code settle} is spent. After a fixed number
     * of calls they may still be compiling the cell's path: with both JVMs pinned to one CPU a SOAP
     * call then took four times its settled time, which measured the compilers, not the call. These
     * calls do not count against the cell's time budget. Returns a note if the compilers never went
     * quiet.
     */
    private String settle(List<Map.Entry<Peer, State>> order, Payload payload, java.util.Random shuffle) {
        if (config.settle().isZero()) {
            return null;
        }
        long end = System.nanoTime() + config.settle().toNanos();
        Runnable round = () -> {
            java.util.Collections.shuffle(order, shuffle);
            for (Map.Entry<Peer, State> a : order) {
                State s = a.getValue();
                if (s.failure == null) {
                    long elapsed = s.elapsed;
                    s.call(a.getKey(), payload, false);
                    s.elapsed = elapsed;
                }
            }
        };
        return untilQuiet(round, end, this::compiling) ? null : "JIT compilers still busy after " + config.settle().toSeconds() + " s of extra warm-up";
    }

    /**
     * Runs {@code round} a slice (about a second) at a time until the JIT compilers worked less than
     * {@value #SETTLED_SHARE} of a slice, or {@code end} ({@link System#nanoTime()}) has passed;
     * whether they went quiet. {@code compiling} starts a count of the compilers' work and gives
     * what it reads, in nanoseconds, at the end of the slice. The sweep's cells and warm-up and the
     * matrix workload's cells settle through this one loop.
     */
    static boolean untilQuiet(Runnable round, long end, java.util.function.Supplier<java.util.function.LongSupplier> compiling) {
        while (System.nanoTime() < end) {
            long start = System.nanoTime();
            java.util.function.LongSupplier compiled = compiling.get();
            do {
                round.run();
            } while (System.nanoTime() - start < SLICE_NANOS && System.nanoTime() < end);
            if (compiled.getAsLong() <= SETTLED_SHARE * (System.nanoTime() - start)) {
                return true;
            }
        }
        return false;
    }

    /** A count of both JVMs' compiling from now, in nanoseconds ({@link #untilQuiet}). */
    private java.util.function.LongSupplier compiling() {
        long before = compileMillis();
        return () -> (compileMillis() - before) * 1_000_000;
    }

    /** {@code a} and {@code b} as one note, either of them possibly null. */
    private static String joinNotes(String a, String b) {
        return a == null ? b : b == null ? a : a + "; " + b;
    }

    /** Milliseconds both JVMs' JIT compilers have worked so far; 0 if either cannot say. */
    private long compileMillis() {
        try {
            return java.lang.management.ManagementFactory.getCompilationMXBean().getTotalCompilationTime()
                    + server.compileMillis();
        } catch (IOException | UnsupportedOperationException e) {
            return 0;
        }
    }

    /** Pins both JVMs (every thread) to CPU 0, or unpins them to all CPUs, with taskset. */
    private void pin(boolean on) {
        if (on == pinned || !pinningWorks) {
            return;
        }
        String mask = on ? "0" : "0-" + (cpus - 1);
        for (long pid : new long[] {ProcessHandle.current().pid(), server.pid()}) {
            try {
                Process p = new ProcessBuilder("taskset", "-a", "-c", "-p", mask, Long.toString(pid))
                        .redirectErrorStream(true).redirectOutput(ProcessBuilder.Redirect.DISCARD).start();
                if (p.waitFor() != 0) {
                    throw new IOException("taskset exited with " + p.exitValue());
                }
            } catch (IOException e) {
                pinningWorks = false;
                notes.add("could not pin the JVMs for small messages (" + e.getMessage() + "); all cells ran unpinned");
                return;
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                return;
            }
        }
        pinned = on;
    }

    static String describe(Throwable e) {
        if (e instanceof StackOverflowError) {
            return "StackOverflowError";
        }
        String msg = e.getMessage() == null ? "" : ": " + e.getMessage().lines().findFirst().orElse("");
        return e.getClass().getSimpleName() + (msg.length() > 160 ? msg.substring(0, 160) + "..." : msg);
    }

    /** One protocol's progress through one cell. */
    static final class State {
        final List<Long> samples = new ArrayList<>();
        long elapsed;
        String failure;
        long wireBytes = -1;
        String wireNote;
        /** How the JIT compilers stood while the cell was timed, if that is worth a note. */
        String jitNote;
        /** Where the current run's samples begin, and each finished run's median (µs). */
        private int runStart;
        final List<Double> runMedians = new ArrayList<>();
        /** Which protocol the timed calls of all runs took, counted only by a peer whose policy chooses it. */
        private final WayCounts ways = new WayCounts();
        private boolean countsWays;

        void countWays(Peer peer, boolean on) {
            countsWays = peer.countWays(on ? ways : null) || countsWays;
        }

        void startRun() {
            runStart = samples.size();
            elapsed = 0;
        }

        void endRun() {
            if (failure == null && samples.size() > runStart) {
                long[] run = samples.subList(runStart, samples.size()).stream().mapToLong(Long::longValue).sorted().toArray();
                runMedians.add(Cell.quantileMicros(run, 0.5));
            }
        }

        /** One round trip; its time in nanoseconds, or -1 when it failed or answered wrong. */
        long call(Peer peer, Payload payload, boolean timed) {
            long start = System.nanoTime();
            Object back;
            long t;
            try {
                back = peer.roundTrip(payload);
                t = System.nanoTime() - start;
            } catch (Peer.Failure f) {
                failure = f.getMessage();
                return -1;
            } catch (Exception | StackOverflowError e) {
                failure = describe(e);
                return -1;
            } finally {
                ways.countHeld();   // a policy row's records, held during the call: counted outside its time
            }
            elapsed += t;
            if (!payload.matches(back)) {
                failure = "wrong answer: what came back differs from what was sent";
                return -1;
            }
            if (timed) {
                samples.add(t);
            }
            return t;
        }

        Cell toCell(Peer peer, Payload p, boolean pinned, int reps, int runs) {
            if (failure != null) {
                return Cell.failed(p.workload(), p.size(), peer.name(), pinned, failure);
            }
            String note = samples.size() < reps * runs ? samples.size() + " of " + reps * runs + " samples (time budget)" : null;
            if (runs > 1) {
                String medians = runMedians.stream().map(Report::number).collect(Collectors.joining(", "));
                note = joinNotes(note, "medians of the " + runMedians.size() + " runs: " + medians
                        + " (range " + Report.number(runMedians.stream().mapToDouble(Double::doubleValue).max().orElse(0)
                        - runMedians.stream().mapToDouble(Double::doubleValue).min().orElse(0)) + ")");
            }
            note = joinNotes(joinNotes(joinNotes(countsWays ? ways.note() : null, note), wireNote), jitNote);
            return Cell.measured(p.workload(), p.size(), peer.name(), samples.stream().mapToLong(Long::longValue).toArray(),
                    wireBytes, pinned, note, countsWays ? ways : null);
        }
    }
}
