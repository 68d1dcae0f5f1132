package io.switchboard.components.matrix;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.switchboard.client.Switchboard;
import io.switchboard.protocol.ClientSettings;
import io.switchboard.protocol.Peer;
import io.switchboard.protocol.ServerSettings;
import io.switchboard.protocol.TlsSettings;
import io.switchboard.registry.server.RegistryServer;
import io.switchboard.server.ComponentServer;
import io.switchboard.testing.TestCertificates;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.Set;
import java.util.TreeMap;
import java.util.TreeSet;
import java.util.concurrent.ConcurrentHashMap;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;
import org.junit.jupiter.api.Test;

/**
 * Components that call components, behind mutual TLS on every listener: four matrix workers, each
 * reaching the registry and its neighbours (Cannon's shifts) with its host's key and trust, as
 * {@code ComponentContext.clientSettings()} hands them to a served component. Every callee sees
 * who called: the manager by its certificate, a neighbour by the workers' certificate. A worker
 * without a key of its own reaches no neighbour, and its product fails without a shift delivered.
 */
class MatrixMutualTlsTest {
    private static final int N = 64;
    private final TestCertificates certs = TestCertificates.get();
    private final List<AutoCloseable> open = new ArrayList<>();
    /** Per operation, the (authentication, principal) pairs of the callers the workers saw. */
    private final Map<String, Set<String>> callers = new ConcurrentHashMap<>();

    @AfterEach
    void close() throws Exception {
        for (int i = open.size() - 1; i >= 0; i--) {
            open.get(i).close();
        }
    }

    /** A registry and four workers, every listener requiring a client certificate; the workers call out with {@code workerTls}. */
    private RegistryServer start(TlsSettings workerTls) {
        RegistryServer registry = RegistryServer.builder().secret("t").tls(certs.serverMutual()).start();
        open.add(registry);
        for (int w = 0; w < 4; w++) {
            MatrixWorkerService worker = new MatrixWorkerService(registry.endpoint(), null,
                    ClientSettings.defaults().withTls(workerTls));
            ComponentServer server = ComponentServer.builder()
                    .settings(ServerSettings.defaults().withTls(certs.serverMutual()))
                    .registry(registry.endpoint(), "t")
                    .drain(Duration.ZERO, Duration.ofSeconds(5))   // nothing to wait for once a product is done
                    .interceptor((call, next) -> {
                        Peer p = call.peer();
                        callers.computeIfAbsent(call.operation().name(), op -> ConcurrentHashMap.newKeySet())
                                .add(p.authentication() + " " + p.principal());
                        return next.proceed(call);
                    })
                    .build();
            open.add(worker);
            open.add(server);
            server.export("matrix-worker-" + w, MatrixWorkerComponent.skeleton(worker));
        }
        return registry;
    }

    /** Cannon's product by the workers, the manager calling them with its own certificate. */
    private Block cannon(RegistryServer registry, String workerPolicy, Block a, Block b) {
        try (Switchboard sb = Switchboard.builder(registry.endpoint()).tls(certs.spiffeClient()).connect();
             MatrixManager manager = new MatrixManager(sb, MatrixManager.discover(sb, "matrix-worker-"))) {
            return manager.workerPolicy(workerPolicy).multiplyCannon(a, b);
        }
    }

    @ParameterizedTest
    @ValueSource(strings = {"fixed:grpc", "fixed:soap"})   // tcp is not on this module's class path
    void workersBehindMutualTlsMultiplyAndEachCalleeSeesItsCallersCertificate(String policy) {
        Block a = Matrices.integers(new Random(11), N, N);
        Block b = Matrices.integers(new Random(12), N, N);
        assertTrue(Blocks.identical(Blocks.multiply(a, b), cannon(start(certs.client()), policy, a, b)), policy);
        String manager = Peer.Authentication.MUTUAL_TLS + " " + TestCertificates.SPIFFE_ID;
        String worker = Peer.Authentication.MUTUAL_TLS + " " + TestCertificates.CLIENT_SUBJECT;
        Map<String, Set<String>> seen = new TreeMap<>(callers);
        assertEquals(Set.of(manager), seen.get("setup"), seen.toString());
        assertEquals(Set.of(manager), seen.get("step"), seen.toString());
        assertEquals(Set.of(worker), seen.get("receiveA"), "worker to worker: " + seen);
        assertEquals(Set.of(worker), seen.get("receiveB"), "worker to worker: " + seen);
    }

    @Test
    void aWorkerWithoutAKeyOfItsOwnReachesNoNeighbour() {
        RegistryServer registry = start(certs.clientWithoutKey());
        Block a = Matrices.integers(new Random(13), N, N);
        RuntimeException failed = assertThrows(RuntimeException.class, () -> cannon(registry, "fixed:grpc", a, a));
        System.out.println("without a key: " + failed);
        Set<String> operations = new TreeSet<>(callers.keySet());
        assertTrue(operations.contains("setup"), "the manager reached the workers: " + operations);
        assertTrue(!operations.contains("receiveA") && !operations.contains("receiveB"),
                "no shift was delivered: " + operations);
    }
}
