package io.switchboard.examples;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.google.gson.JsonObject;
import com.google.gson.JsonParser;
import io.switchboard.registry.server.RegistryServer;
import io.switchboard.server.ComponentServer;
import io.switchboard.testing.conformance.ConformanceComponent;
import io.switchboard.testing.conformance.ConformanceImpl;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;

/**
 * {@code load} through the registry, as any client: its summary's JSON keys; and a rolling
 * restart under it, each of three replicas of a slow, non-idempotent operation drained (as
 * SIGTERM on {@code serve} does: {@code ComponentServer.close}) and started again in turn while
 * 16 calls are in flight: no call fails, none runs twice.
 */
class LoadCommandTest {
    /** {@code increment} takes 200 ms: a slow operation that must not run twice. */
    static final class Slow extends ConformanceImpl {
        @Override
        public long increment(int by) {
            try {
                Thread.sleep(200);   // the operation's own work, not a wait of the test
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
            return super.increment(by);
        }
    }

    /** The call ids every replica ran, all together; a second run of one id anywhere is counted. */
    private final Set<String> ran = ConcurrentHashMap.newKeySet();
    private final AtomicInteger ranTwice = new AtomicInteger();

    private ComponentServer replica(String registry, Slow impl) {
        ComponentServer server = ComponentServer.builder().protocols("grpc", "tcp", "soap").registry(registry, null)
                .drain(Duration.ofMillis(300), Duration.ofSeconds(10))
                .interceptor((call, next) -> {
                    if (call.callId() != null && !ran.add(call.callId())) {
                        ranTwice.incrementAndGet();
                    }
                    return next.proceed(call);
                }).build();
        server.export("Counter", ConformanceComponent.skeleton(impl));
        return server;
    }

    private static JsonObject summary(String stdout) {
        String[] lines = stdout.strip().split("\n");
        return JsonParser.parseString(lines[lines.length - 1]).getAsJsonObject();
    }

    @Test
    void theSummaryIsOneJsonObjectOnTheLastLine() {
        try (RegistryServer registry = RegistryServer.builder().start();
             ComponentServer server = replica(registry.endpoint(), new Slow())) {
            String out = CommandOutput.stdout(0, "load", "Counter", "ping", "--registry", registry.endpoint(),
                    "--concurrency", "2", "--duration", "1", "--protocol", "grpc", "--json");
            JsonObject s = summary(out);
            for (String key : List.of("calls", "ok", "failed", "failures", "protocols", "fallbacks", "calls_per_s",
                    "p50_ms", "p99_ms")) {
                assertTrue(s.has(key), key + " in " + s);
            }
            assertTrue(s.get("calls").getAsLong() > 0, s.toString());
            assertEquals(s.get("calls").getAsLong(), s.get("ok").getAsLong(), s.toString());
            assertEquals(s.get("calls").getAsLong(), s.getAsJsonObject("protocols").get("grpc").getAsLong(), s.toString());
        }
    }

    @Test
    void aRollingRestartUnderLoadFailsNoCallAndRunsNoneTwice() throws Exception {
        ExecutorService loading = Executors.newSingleThreadExecutor();
        List<ComponentServer> replicas = new ArrayList<>();
        try (RegistryServer registry = RegistryServer.builder().start()) {
            String url = registry.endpoint();
            for (int i = 0; i < 3; i++) {
                replicas.add(replica(url, new Slow()));
            }
            Future<String> load = loading.submit(() -> CommandOutput.stdout(0, "load", "Counter", "increment", "by=1",
                    "--registry", url, "--concurrency", "16", "--duration", "6", "--json"));
            for (int i = 0; i < 3; i++) {
                replicas.get(i).close();   // drains: unbinds, answers 300 ms, refuses as draining, waits for its calls
                replicas.set(i, replica(url, new Slow()));
            }
            JsonObject s = summary(load.get(60, TimeUnit.SECONDS));
            assertEquals(0, s.get("failed").getAsLong(), s.toString());
            assertTrue(s.get("calls").getAsLong() > 16, s.toString());
            assertEquals(0, ranTwice.get(), "a call ran on two replicas: " + s);
        } finally {
            replicas.forEach(ComponentServer::close);
            loading.shutdownNow();
        }
    }
}
