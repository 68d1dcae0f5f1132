package io.switchboard.examples.bench;

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
 * what was sent. Writes {@code async.csv} and {@code async.md}.
 *
 * <pre>{@code
 * AsyncBench bench = new AsyncBench(new AsyncBench.Config(List.of(10), Duration.ofSeconds(3), Duration.ofSeconds(2)),
 *         Map.of("grpc", grpcStub, "local", localStub));
 * List<AsyncBench.Row> rows = bench.run(progressBar);
 * String md = AsyncBench.writeAll(rows, machine, "./switchboard bench --workloads async", dir);
 * }</pre>
 */
final class AsyncBench {
    /** The async cells: calls kept in flight. */
    static final int[] IN_FLIGHT = {1, 8, 64};
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

    private final Config config;
    private final Map<String, EchoStub> stubs;

    /** @param stubs the stub per protocol name, each pinned to that protocol, in the order of the table */
    AsyncBench(Config config, Map<String, EchoStub> stubs) {
        this.config = config;
        this.stubs = new LinkedHashMap<>(stubs);
    }

    /** Steps the progress bar will take: one per cell. */
    int cellCount() {
        return config.sizes().size() * stubs.size() * (IN_FLIGHT.length + 1);
    }

    List<Row> run(ProgressBar progress) throws InterruptedException {
        List<Row> rows = new ArrayList<>();
        double seconds = config.perCell().toNanos() / 1e9;
        for (int size : config.sizes()) {
            double[] values = values(size);
            for (Map.Entry<String, EchoStub> e : stubs.entrySet()) {
                String protocol = e.getKey();
                EchoStub stub = e.getValue();
                progress.setExtraMessage("async " + protocol + " " + Report.size(size));
                double warm = config.warmup().toNanos() / 1e9 / 2;
                Row warmAsync = inFlight(protocol, stub, values, 8, warm);
                Row warmBlocking = warmAsync.failure() == null ? blocking(protocol, stub, values, warm) : warmAsync;
                if (warmBlocking.failure() != null) {
                    String reason = "failed in the warm-up: " + warmBlocking.failure();
                    rows.add(new Row(protocol, size, true, 1, 0, 0, reason));
                    for (int n : IN_FLIGHT) {
                        rows.add(new Row(protocol, size, false, n, 0, 0, reason));
                    }
                    progress.stepBy(IN_FLIGHT.length + 1L);
                    continue;
                }
                rows.add(blocking(protocol, stub, values, seconds));
                progress.step();
                for (int n : IN_FLIGHT) {
                    rows.add(inFlight(protocol, stub, values, n, seconds));
                    progress.step();
                }
            }
        }
        return rows;
    }

    /** The blocking form on this thread, one call after another. */
    private static Row blocking(String protocol, EchoStub stub, double[] values, double seconds) {
        long start = System.nanoTime();
        long end = start + (long) (seconds * 1e9);
        long calls = 0;
        String failure = null;
        while (System.nanoTime() < end) {
            try {
                failure = check(values, stub.echoDoubles(values));
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
    private static Row inFlight(String protocol, EchoStub stub, double[] values, int inFlight, double seconds)
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
        final EchoStub stub;
        final double[] values;
        final AtomicLong done = new AtomicLong();
        final AtomicReference<String> failure = new AtomicReference<>();
        final CountDownLatch drained;
        volatile boolean stop;

        Chains(EchoStub stub, double[] values, int inFlight) {
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
                    call = stub.echoDoublesAsync(values);
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
                .append("the others against the server JVM on loopback. Every answer was compared with what was sent; ")
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
                + " ms per cell after " + config.warmup().toMillis() + " ms of warm-up per protocol and size; both JVMs unpinned; "
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
