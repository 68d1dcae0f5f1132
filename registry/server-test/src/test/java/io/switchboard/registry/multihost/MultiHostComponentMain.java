package io.switchboard.registry.multihost;

import io.switchboard.protocol.ServerSettings;
import io.switchboard.registry.ComponentEntry;
import io.switchboard.server.ComponentServer;
import io.switchboard.testing.conformance.ConformanceComponent;
import io.switchboard.testing.conformance.ConformanceImpl;
import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.stream.Collectors;

/**
 * A component host of {@link MultiHostTest}: the conformance component on SOAP and gRPC, bound to
 * every address of its host ({@code --bind 0.0.0.0}, so its entry publishes the host's own
 * address), through the registries {@code args[0]} (comma-separated, the first preferred) with the
 * secret {@code args[1]} and a lease of {@code args[2]} seconds. Prints "bound INSTANCE
 * ENDPOINTS". It remembers every {@code increment} it runs by its argument (each call of the test
 * passes its own) and answers the line "runs" on standard input with "runs ARG:TIMES,..." , so the
 * test counts executions on the servers, also of a host that is cut off from the network.
 */
public final class MultiHostComponentMain {
    private MultiHostComponentMain() {
    }

    /** Counts each increment by its argument. */
    static final class CountingImpl extends ConformanceImpl {
        final Map<Integer, AtomicInteger> runs = new ConcurrentHashMap<>();

        @Override
        public long increment(int by) {
            runs.computeIfAbsent(by, k -> new AtomicInteger()).incrementAndGet();
            return super.increment(by);
        }
    }

    public static void main(String[] args) throws Exception {
        CountingImpl impl = new CountingImpl();
        ComponentServer server = ComponentServer.builder().protocols("grpc", "soap")
                .settings(ServerSettings.defaults().withBindAddress("0.0.0.0"))
                .registry(args[0], args[1]).lease(Duration.ofSeconds(Long.parseLong(args[2]))).build();
        ComponentEntry entry = server.export(ConformanceComponent.skeleton(impl));
        System.out.println("bound " + entry.instanceId() + " " + entry.endpoints());
        System.out.flush();
        BufferedReader in = new BufferedReader(new InputStreamReader(System.in, StandardCharsets.UTF_8));
        for (String line = in.readLine(); line != null; line = in.readLine()) {
            if (line.equals("runs")) {
                Map<Integer, Integer> snapshot = new TreeMap<>();
                impl.runs.forEach((arg, n) -> snapshot.put(arg, n.get()));
                System.out.println("runs " + snapshot.entrySet().stream().map(e -> e.getKey() + ":" + e.getValue())
                        .collect(Collectors.joining(",")));
                System.out.flush();
            }
        }
        // the test closed our standard input: it is done with us
        server.close();
    }
}
