package io.switchboard.cli;

import io.switchboard.client.DynamicStub;
import io.switchboard.client.Switchboard;
import io.switchboard.client.load.LoadRun;
import io.switchboard.client.load.LoadTally;
import io.switchboard.codec.dynamic.DynamicRecord;
import io.switchboard.metastub.Policies;
import java.time.Duration;
import java.util.Locale;
import java.util.Map;
import java.util.concurrent.Callable;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicReference;
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

    /** The run under way, for Ctrl-C or SIGTERM to stop. */
    private final AtomicReference<LoadRun> running = new AtomicReference<>();

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
            LoadRun run = running.get();
            if (run != null) {
                run.stop();
            }
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
        LoadTally tally = new LoadTally((kind, cause) ->   // the first of each kind, whole; the summary counts the rest
                System.err.println("failed    " + kind + ": " + cause.getMessage()));
        try (Switchboard sb = Switchboard.builder(target.registry).policy(Policies.byName(target.policy))
                .listener(tally).settings(token.client(tls.client())).connect()) {
            DynamicStub stub = sb.dynamic(target.name).withOptions(target.options());
            String problem = target.problem(stub);
            if (problem != null) {
                System.err.println(problem);
                return 2;
            }
            LoadRun.Builder load = LoadRun.builder(() -> {
                DynamicRecord request = target.request(stub);   // one per caller: not shared between threads
                return () -> stub.call(request);
            }).concurrency(concurrency).duration(Duration.ofNanos((long) (durationSeconds * 1e9))).tally(tally);
            if (rate != null) {
                load.rate(rate);
            }
            LoadRun run = load.start();
            running.set(run);
            if (stopping.get()) {
                run.stop();   // the signal came before the run was there to stop
            }
            long lastCalls = 0;
            while (!run.await(Duration.ofSeconds(1))) {
                long calls = tally.calls();
                System.err.printf(Locale.ROOT, "%5.0f s  %8d calls  %6d/s  %d failed%n", run.elapsedSeconds(), calls,
                        calls - lastCalls, tally.failed());
                lastCalls = calls;
            }
            print(tally, run.elapsedSeconds());
            return tally.failed() == 0 ? 0 : 1;
        }
    }

    private void print(LoadTally t, double elapsed) {
        long calls = t.calls();
        long failed = t.failed();
        Map<String, Long> failures = t.failures();
        Map<String, Long> protocols = t.protocols();
        double perSecond = calls / elapsed;
        System.out.printf(Locale.ROOT, "calls      %d in %.1f s (%.0f/s), %d answered, %d failed%n", calls, elapsed,
                perSecond, calls - failed, failed);
        failures.forEach((kind, n) -> System.out.printf(Locale.ROOT, "  failed   %-28s %d%n", kind, n));
        System.out.println("protocols  " + protocols + " (the protocol that answered)");
        System.out.printf(Locale.ROOT, "fallbacks  %d, failovers %d%n", t.fallbacks(), t.failovers());
        System.out.printf(Locale.ROOT, "latency    p50 %.2f ms, p90 %.2f ms, p99 %.2f ms, max %.2f ms%n",
                t.latency().percentileMillis(50), t.latency().percentileMillis(90), t.latency().percentileMillis(99),
                t.latency().maxMillis());
        if (json) {
            StringBuilder s = new StringBuilder("{");
            s.append("\"calls\":").append(calls).append(",\"ok\":").append(calls - failed).append(",\"failed\":")
                    .append(failed).append(",\"failures\":").append(jsonMap(failures)).append(",\"protocols\":")
                    .append(jsonMap(protocols)).append(",\"fallbacks\":").append(t.fallbacks())
                    .append(",\"failovers\":").append(t.failovers())
                    .append(String.format(Locale.ROOT, ",\"duration_s\":%.3f,\"calls_per_s\":%.1f", elapsed, perSecond))
                    .append(String.format(Locale.ROOT, ",\"p50_ms\":%.3f,\"p90_ms\":%.3f,\"p99_ms\":%.3f,\"max_ms\":%.3f",
                            t.latency().percentileMillis(50), t.latency().percentileMillis(90),
                            t.latency().percentileMillis(99), t.latency().maxMillis()))
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
}
