package io.switchboard.bench;

import io.switchboard.components.echo.EchoStub;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicReference;
import me.tongfei.progressbar.ProgressBar;

/**
 * The {@code async} workload: calls per second of the stubs' non-blocking form ({@code echoDoublesAsync})
 * with 1, 8 and 64 calls in flight, and of the blocking form on one thread for reference, per
 * protocol pinned on every call and per {@code double[]} length; every answer is compared with
 * what was sent. Plain grpc-java's future stub runs the same cells as the reference
 * ({@code grpc-plain}). Writes {@code async.csv} and {@code async.md}.
 *
 * <pre>{@code
 * AsyncBench bench = new AsyncBench(new AsyncBench.Config(List.of(10), Duration.ofSeconds(3), Duration.ofSeconds(2)),
 *         Map.of("grpc", AsyncBench.Target.of(grpcStub), "local", AsyncBench.Target.of(localStub)));
 * List<AsyncBench.Row> rows = bench.run(progressBar);
 * String md = AsyncBench.writeAll(rows, machine, "./switchboard bench --workloads async", dir);
 * }</pre>
 */
final class AsyncBench {
    /** The async cells: calls kept in flight. */
    static final int[] IN_FLIGHT = {1, 8, 64};
    /** Slices per cell, the order of the targets rotated from one to the next. */
    static final int ROUNDS = 3;
    static final String CSV_HEADER = "protocol,doubles,mode,in_flight,calls,seconds,calls_per_s,note";
    private static final long DRAIN_SECONDS = 60;

    /**
     * @param sizes   {@code double[]} lengths echoed
     * @param perCell how long each cell keeps calling
     * @param warmup  untimed calls (both forms) per protocol and size first
     */
    record Config(List<Integer> sizes, Duration perCell, Duration warmup) {
    }

    /**
     * One cell: {@code calls} answers received and checked in {@code seconds}.
     *
     * @param inFlight calls outstanding (1 for the blocking form)
     * @param failure  why the cell stopped early (a failed call, a wrong answer), else null
     */
    record Row(String protocol, int doubles, boolean blocking, int inFlight, long calls, double seconds, String failure) {
        double callsPerSecond() {
            return calls / seconds;
        }
    }

    /** What a cell calls: an echo of a {@code double[]}, blocking or not. */
    interface Target {
        double[] echo(double[] values);

        CompletableFuture<double[]> echoAsync(double[] values);

        /** A Switchboard stub's {@code echoDoubles} and {@code echoDoublesAsync}. */
        static Target of(EchoStub stub) {
            return new Target() {
                @Override
                public double[] echo(double[] values) {
                    return stub.echoDoubles(values);
                }

                @Override
                public CompletableFuture<double[]> echoAsync(double[] values) {
                    return stub.echoDoublesAsync(values);
                }
            };
        }
    }

    private final Config config;
    private final Map<String, Target> stubs;

    /** @param stubs what to call per row name (a protocol pinned on each call, or a plain library), in the order of the table */
    AsyncBench(Config config, Map<String, Target> stubs) {
        this.config = config;
        this.stubs = new LinkedHashMap<>(stubs);
    }

    /** Steps the progress bar will take: one per cell. */
    int cellCount() {
        return config.sizes().size() * stubs.size() * (IN_FLIGHT.length + 1);
    }

    List<Row> run(ProgressBar progress) throws InterruptedException {
        List<Row> rows = new ArrayList<>();
        double slice = config.perCell().toNanos() / 1e9 / ROUNDS;
        for (int size : config.sizes()) {
            double[] values = values(size);
            // every target warms up before any is timed: timed first, a target would also pay the
            // server's compilation, as the first protocol of a cell did before the rounds
            Map<String, String> failed = new LinkedHashMap<>();
            double warm = config.warmup().toNanos() / 1e9 / 2;
            for (Map.Entry<String, Target> e : stubs.entrySet()) {
                progress.setExtraMessage("async warm-up " + e.getKey() + " " + Report.size(size));
                Row warmAsync = inFlight(e.getKey(), e.getValue(), values, 8, warm);
                Row warmBlocking = warmAsync.failure() == null ? blocking(e.getKey(), e.getValue(), values, warm) : warmAsync;
                if (warmBlocking.failure() != null) {
                    failed.put(e.getKey(), "failed in the warm-up: " + warmBlocking.failure());
                }
            }
            List<String> names = new ArrayList<>(stubs.keySet());
            names.removeAll(failed.keySet());
            // each cell in ROUNDS slices, the targets' order rotated every slice; a row sums its slices
            for (int mode = 0; mode <= IN_FLIGHT.length; mode++) {
                int inFlight = mode == 0 ? 1 : IN_FLIGHT[mode - 1];
                Map<String, Row> sums = new LinkedHashMap<>();
                for (int round = 0; round < ROUNDS; round++) {
                    for (int i = 0; i < names.size(); i++) {
                        String name = names.get((i + round) % names.size());
                        if (sums.containsKey(name) && sums.get(name).failure() != null) {
                            continue;
                        }
                        progress.setExtraMessage("async " + name + " " + Report.size(size)
                                + (mode == 0 ? " blocking" : " " + inFlight + " in flight"));
                        Row r = mode == 0 ? blocking(name, stubs.get(name), values, slice)
                                : inFlight(name, stubs.get(name), values, inFlight, slice);
                        sums.merge(name, r, (a, b) -> new Row(name, size, a.blocking(), a.inFlight(), a.calls() + b.calls(),
                                a.seconds() + b.seconds(), b.failure()));
                    }
                }
                for (String name : stubs.keySet()) {
                    String reason = failed.get(name);
                    rows.add(reason != null ? new Row(name, size, mode == 0, inFlight, 0, 0, reason) : sums.get(name));
                    progress.step();
                }
            }
        }
        // the table reads a target's cells in a line: blocking, then 1, 8, 64 in flight
        List<Row> ordered = new ArrayList<>();
        for (int size : config.sizes()) {
            for (String name : stubs.keySet()) {
                rows.stream().filter(r -> r.doubles() == size && r.protocol().equals(name)).forEach(ordered::add);
            }
        }
        return ordered;
    }

    /** The blocking form on this thread, one call after another. */
    private static Row blocking(String protocol, Target stub, double[] values, double seconds) {
        long start = System.nanoTime();
        long end = start + (long) (seconds * 1e9);
        long calls = 0;
        String failure = null;
        while (System.nanoTime() < end) {
            try {
                failure = check(values, stub.echo(values));
            } catch (RuntimeException e) {
                failure = Sweep.describe(e);
            }
            if (failure != null) {
                break;
            }
            calls++;
        }
        return new Row(protocol, values.length, true, 1, calls, (System.nanoTime() - start) / 1e9, failure);
    }

    /** Keeps {@code inFlight} calls outstanding for {@code seconds}: each finished call starts the next, no thread waits on one. */
    private static Row inFlight(String protocol, Target stub, double[] values, int inFlight, double seconds)
            throws InterruptedException {
        Chains chains = new Chains(stub, values, inFlight);
        long start = System.nanoTime();
        for (int i = 0; i < inFlight; i++) {
            chains.issue();
        }
        long end = start + (long) (seconds * 1e9);
        // until the time is up and one answer has come (a slow call may outlast a short cell), or a call failed
        while (!chains.stop && (System.nanoTime() < end || chains.done.get() == 0)) {
            TimeUnit.NANOSECONDS.sleep(Math.min(Math.max(end - System.nanoTime(), 1_000_000L), 50_000_000L));
        }
        chains.stop = true;
        long counted = chains.done.get();
        double elapsed = (System.nanoTime() - start) / 1e9;
        if (!chains.drained.await(DRAIN_SECONDS, TimeUnit.SECONDS)) {
            chains.failure.compareAndSet(null, "calls still in flight " + DRAIN_SECONDS + " s after the cell");
        }
        return new Row(protocol, values.length, false, inFlight, counted, elapsed, chains.failure.get());
    }

    /** The calls of one cell: each chain issues its next call when the previous one ends, until stopped. */
    private static final class Chains {
        final Target stub;
        final double[] values;
        final AtomicLong done = new AtomicLong();
        final AtomicReference<String> failure = new AtomicReference<>();
        final CountDownLatch drained;
        volatile boolean stop;

        Chains(Target stub, double[] values, int inFlight) {
            this.stub = stub;
            this.values = values;
            this.drained = new CountDownLatch(inFlight);
        }

        /**
         * Issues calls while they come back at once (a loop, not a recursion: an in-process call
         * may complete before its future is returned); the first that does not continues in its callback.
         */
        void issue() {
            while (true) {
                CompletableFuture<double[]> call;
                try {
                    call = stub.echoAsync(values);
                } catch (RuntimeException e) {
                    call = CompletableFuture.failedFuture(e);
                }
                if (!call.isDone()) {
                    call.whenComplete((back, thrown) -> {
                        if (ended(back, thrown)) {
                            issue();
                        }
                    });
                    return;
                }
                double[] back = null;
                Throwable thrown = null;
                try {
                    back = call.join();
                } catch (RuntimeException e) {
                    thrown = e.getCause() != null ? e.getCause() : e;
                }
                if (!ended(back, thrown)) {
                    return;
                }
            }
        }

        /** Checks and counts one answer; false when this chain stops here. */
        private boolean ended(double[] back, Throwable thrown) {
            String wrong = thrown != null ? Sweep.describe(thrown) : check(values, back);
            if (wrong != null) {
                failure.compareAndSet(null, wrong);
                stop = true;
            } else if (!stop) {
                done.incrementAndGet();   // answers after the stop are checked but not counted
            }
            if (stop) {
                drained.countDown();
                return false;
            }
            return true;
        }
    }

    private static String check(double[] sent, double[] back) {
        return Arrays.equals(sent, back) ? null : "wrong answer: what came back differs from what was sent";
    }

    /** Distinct values with a fraction, a negative zero and a NaN, so that a lossy copy shows. */
    private static double[] values(int n) {
        double[] v = new double[n];
        for (int i = 0; i < n; i++) {
            v[i] = i - 0.25;
        }
        v[0] = -0.0;
        v[n - 1] = Double.NaN;
        return v;
    }

    static String csv(List<Row> rows) {
        StringBuilder b = new StringBuilder(CSV_HEADER).append('\n');
        for (Row r : rows) {
            b.append(String.format(Locale.ROOT, "%s,%d,%s,%d,%d,%.3f,%s,%s%n", r.protocol(), r.doubles(),
                    r.blocking() ? "blocking" : "async", r.inFlight(), r.calls(), r.seconds(),
                    r.calls() == 0 ? "" : String.format(Locale.ROOT, "%.0f", r.callsPerSecond()),
                    r.failure() == null ? "" : "\"" + r.failure().replace("\"", "'") + "\""));
        }
        return b.toString();
    }

    /** The table alone (a section of bench.md, and the body of async.md). */
    static String table(List<Row> rows) {
        StringBuilder b = new StringBuilder();
        b.append("Calls per second of `echoDoubles`, each protocol pinned on every call; `local` runs in the client's JVM, ")
                .append("the others against the server JVM on loopback; `grpc-plain` is grpc-java alone (its future stub, the ")
                .append("same packed layout, default executors). Every answer was compared with what was sent; ")
                .append("**checked** counts the answers of the row's cells. Blocking: one thread, one call after another.\n\n");
        b.append("| protocol | doubles | blocking, 1 thread | async, 1 in flight | 8 in flight | 64 in flight | checked | note |\n");
        b.append("| --- | ---: | ---: | ---: | ---: | ---: | ---: | --- |\n");
        Map<String, List<Row>> byLine = new LinkedHashMap<>();
        rows.forEach(r -> byLine.computeIfAbsent(r.protocol() + "/" + r.doubles(), k -> new ArrayList<>()).add(r));
        for (List<Row> line : byLine.values()) {
            Row first = line.get(0);
            b.append("| ").append(first.protocol()).append(" | ").append(Report.size(first.doubles())).append(" | ");
            for (Row r : line) {
                b.append(r.failure() == null ? String.format(Locale.ROOT, "%,.0f", r.callsPerSecond()) : "failed").append(" | ");
            }
            b.append(String.format(Locale.ROOT, "%,d", line.stream().mapToLong(Row::calls).sum())).append(" | ");
            line.stream().filter(r -> r.failure() != null).findFirst()
                    .ifPresent(r -> b.append(r.blocking() ? "blocking" : r.inFlight() + " in flight").append(": ").append(r.failure()));
            b.append(" |\n");
        }
        return b.toString();
    }

    /** Writes async.csv and async.md (the machine, the command, the table) into {@code dir}; returns the Markdown. */
    static String writeAll(List<Row> rows, Report.Machine machine, String command, Config config, Path dir) throws IOException {
        Files.writeString(dir.resolve("async.csv"), csv(rows), StandardCharsets.UTF_8);
        String md = "# Switchboard benchmark: async throughput\n\n"
                + "Reproduce with `" + command + "` (" + machine.date() + "). " + config.perCell().toMillis()
                + " ms per cell, in " + ROUNDS + " slices with the rows' order rotated from one slice to the next, after "
                + config.warmup().toMillis() + " ms of warm-up of every row and size first; both JVMs unpinned; "
                + machine.cpus() + " × " + machine.cpuModel() + ", load average " + machine.loadStart() + " at the start and "
                + machine.loadEnd() + " at the end of the run: a shared machine, read the shape rather than the figures.\n\n"
                + table(rows);
        Files.writeString(dir.resolve("async.md"), md, StandardCharsets.UTF_8);
        return md;
    }

    static boolean anyWrong(List<Row> rows) {
        return rows.stream().anyMatch(r -> r.failure() != null && r.failure().startsWith("wrong answer"));
    }
}
