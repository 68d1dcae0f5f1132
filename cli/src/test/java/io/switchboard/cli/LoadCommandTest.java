package io.switchboard.cli;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.google.gson.JsonObject;
import com.google.gson.JsonParser;
import io.switchboard.protocol.Skeleton;
import io.switchboard.registry.RegistryClient;
import io.switchboard.registry.server.RegistryServer;
import io.switchboard.server.ComponentContext;
import io.switchboard.server.ComponentProvider;
import io.switchboard.server.ComponentServer;
import io.switchboard.testing.ChildJvm;
import io.switchboard.testing.conformance.ConformanceComponent;
import io.switchboard.testing.conformance.ConformanceImpl;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * {@code load} through the registry, as any client: its summary's JSON keys; and a rolling
 * restart under it, each of three {@code serve} processes of a slow, non-idempotent operation sent
 * SIGTERM (it drains) and started again in turn while 16 calls are in flight: no call fails, none
 * runs twice.
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

    private static ComponentServer replica(String registry, Slow impl) {
        ComponentServer server = ComponentServer.builder().protocols("grpc", "tcp", "soap").registry(registry, null)
                .build();
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

    /**
     * The component the replicas serve: {@code serve SlowCounter --classpath DIR} finds it through
     * the provider line {@link #providerLine} writes in DIR (the class itself is on the test class
     * path, which the child JVMs share), so that the bundled components' list stays as it is.
     */
    public static final class SlowCounterProvider implements ComponentProvider {
        @Override
        public String name() {
            return "SlowCounter";
        }

        @Override
        public Skeleton create(ComponentContext context) {
            return ConformanceComponent.skeleton(new Slow());
        }
    }

    private static Path providerLine(Path dir) throws IOException {
        Path services = Files.createDirectories(dir.resolve("META-INF/services"));
        Files.writeString(services.resolve(ComponentProvider.class.getName()), SlowCounterProvider.class.getName() + "\n");
        return dir;
    }

    private final List<ChildJvm> children = new ArrayList<>();

    @AfterEach
    void killLeftovers() throws InterruptedException {
        for (ChildJvm child : children) {
            child.close();
        }
    }

    private ChildJvm start(Path dir, String log, String... args) throws IOException {
        ChildJvm child = ChildJvm.start(dir.resolve(log + ".err"), Main.class, args);
        children.add(child);
        return child;
    }

    /** A replica: {@code serve} writing a line per call it runs to its standard output. */
    private ChildJvm replica(Path dir, Path classes, String url, String log) throws IOException {
        return start(dir, log, "serve", "SlowCounter", "--name", "Counter", "--classpath", classes.toString(),
                "--registry", url, "--call-log", "-");
    }

    /**
     * The rolling restart as an operator runs it, every piece a process of its own: a registry,
     * three {@code serve} replicas of a 200 ms non-idempotent operation, and {@code load} with 16
     * calls in flight. Each replica in turn, once load's calls reach it, gets SIGTERM: its shutdown
     * hook drains (unbinds, answers for the quiet period, refuses as draining, waits for its calls)
     * and says so, and the process ends by the signal (exit 143; SIGKILL would be 137); it has left
     * the registry; it is started again and awaited until load's calls reach the new one. Then load
     * gets SIGTERM and prints its summary. Every replica logs the call id of each run ({@code
     * --call-log}): no call failed, none ran twice, and the runs are exactly the calls load made.
     * Each step waits for what the processes print, never for a time.
     */
    @Test
    void aRollingRestartOfServeProcessesUnderLoadFailsNoCallAndRunsNoneTwice(@TempDir Path dir) throws Exception {
        Path classes = providerLine(dir.resolve("slow-counter"));
        String url = start(dir, "registry", "registry", "--port", "0", "--store", "memory").await("registry");
        List<ChildJvm> replicas = new ArrayList<>();
        for (int i = 0; i < 3; i++) {
            replicas.add(replica(dir, classes, url, "replica-" + i));
        }
        List<String> instances = new ArrayList<>();
        for (ChildJvm r : replicas) {
            instances.add(instanceId(r.await("serving", START)));
        }
        ChildJvm load = start(dir, "load", "load", "Counter", "increment", "by=1", "--registry", url,
                "--concurrency", "16", "--duration", "0", "--json");
        List<ChildJvm> everyReplica = new ArrayList<>(replicas);
        try (RegistryClient reader = RegistryClient.connect(url)) {
            for (int i = 0; i < 3; i++) {
                ChildJvm old = replicas.get(i);
                old.await("ran ", START);   // load's calls reach it: it has calls to drain
                old.terminate();   // SIGTERM
                String stopped = old.await("stopped", Duration.ofSeconds(30));
                assertTrue(stopped.contains(", 0 cut;"), "replica " + i + " drained without cutting a call: " + stopped);
                assertTrue(old.process().waitFor(30, TimeUnit.SECONDS), "replica " + i + " ended after its drain");
                assertEquals(143, old.process().exitValue(), "replica " + i + " ended by SIGTERM (128 + 15), not killed");
                String gone = instances.get(i);
                assertTrue(reader.lookup("Counter").stream().noneMatch(e -> e.instanceId().equals(gone)),
                        "replica " + i + " left the registry");

                ChildJvm again = replica(dir, classes, url, "replica-" + i + "-again");
                everyReplica.add(again);
                replicas.set(i, again);
                instances.set(i, instanceId(again.await("serving", START)));
                again.await("ran ", START);   // load's watch found the new one: it takes calls
            }
        }
        load.terminate();   // SIGTERM: no new calls, those under way finish, the summary
        JsonObject s = JsonParser.parseString("{" + load.await("{", Duration.ofSeconds(60))).getAsJsonObject();
        for (ChildJvm r : replicas) {
            r.terminate();
        }
        for (ChildJvm r : replicas) {
            assertTrue(r.await("stopped", Duration.ofSeconds(30)).contains(", 0 cut;"));
        }

        Map<String, Integer> runs = new HashMap<>();
        for (ChildJvm r : everyReplica) {
            for (String line : r.output()) {
                if (line.startsWith("ran ")) {
                    String[] f = line.split(" ");
                    assertEquals("increment", f[3], line);
                    runs.merge(f[f.length - 1], 1, Integer::sum);
                }
            }
        }
        assertEquals(0, s.get("failed").getAsLong(), "failed calls: " + s + "; load's stderr:\n"
                + Files.readString(dir.resolve("load.err")));
        assertTrue(s.get("calls").getAsLong() > 16, s.toString());
        assertFalse(runs.containsKey("-"), "every call came with its call id");
        List<String> twice = runs.entrySet().stream().filter(e -> e.getValue() > 1).map(Map.Entry::getKey).toList();
        assertEquals(List.of(), twice, "call ids run more than once");
        assertEquals(s.get("calls").getAsLong(), runs.size(), "every call load made ran, once: " + s);
        System.out.println("rolling restart of 3 serve processes under load: " + s);
    }

    /** How long a JVM may take to start and serve on a busy 2-core machine. */
    private static final Duration START = Duration.ofSeconds(60);

    /** The instance id in {@code serve}'s line {@code serving   NAME (instance ID)}. */
    private static String instanceId(String serving) {
        return serving.substring(serving.indexOf("(instance ") + 10, serving.indexOf(')'));
    }
}
