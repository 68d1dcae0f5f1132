package io.switchboard.components.matrix;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.switchboard.metastub.MetaStub;
import io.switchboard.metastub.Policies;
import io.switchboard.protocol.CallOptions;
import io.switchboard.server.ComponentServer;
import io.switchboard.registry.server.RegistryServer;
import io.switchboard.client.Switchboard;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.Set;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * Four workers bound in a registry, found by a manager that knows only the registry's address,
 * multiplying 500 × 500 matrices both ways under every selection policy; the workers' own calls to
 * each other (Cannon's shifts) use the same policy. Each product must equal the local one exactly
 * (integer-valued matrices), and the protocol of every call is counted.
 */
class MatrixOverRegistryTest {
    private static final int N = 500;
    private static final int K = 4;
    private static RegistryServer registry;
    private static final List<ComponentServer> servers = new ArrayList<>();
    private static final List<MatrixWorkerService> impls = new ArrayList<>();
    private static Block a;
    private static Block b;
    private static Block local;

    @BeforeAll
    static void start() {
        registry = RegistryServer.builder().secret("t").start();
        for (int w = 0; w < K; w++) {
            // a server exports one component of a kind (its listeners key services by component
            // name), so each worker has its own, as it would in a process of its own
            ComponentServer server = ComponentServer.builder().registry(registry.endpoint(), "t").build();
            servers.add(server);
            MatrixWorkerService impl = new MatrixWorkerService(registry.endpoint(), null);
            impls.add(impl);
            server.export("matrix-worker-" + w, MatrixWorkerComponent.skeleton(impl));
        }
        Random rnd = new Random(42);
        a = Matrices.integers(rnd, N, N);
        b = Matrices.integers(rnd, N, N);
        local = Blocks.multiply(a, b);
    }

    @AfterAll
    static void stop() {
        servers.forEach(ComponentServer::close);
        impls.forEach(MatrixWorkerService::close);
        registry.close();
    }

    @ParameterizedTest
    @ValueSource(strings = {"adaptive", "size", "first-common", "fixed:soap", "fixed:grpc"})
    void bothAlgorithmsEqualTheLocalProduct(String policy) {
        ProtocolTally tally = new ProtocolTally();
        impls.forEach(w -> w.outgoing().reset());
        try (Switchboard sb = Switchboard.builder(registry.endpoint()).policy(Policies.byName(policy)).listener(tally)
                .connect();
             MatrixManager manager = new MatrixManager(sb, MatrixManager.discover(sb, "matrix-worker-"))) {
            manager.workerPolicy(policy);
            assertEquals(List.of("matrix-worker-0", "matrix-worker-1", "matrix-worker-2", "matrix-worker-3"),
                    manager.workers());
            long t0 = System.nanoTime();
            Block simple = manager.multiplySimple(a, b);
            long t1 = System.nanoTime();
            Block cannon = manager.multiplyCannon(a, b);
            long t2 = System.nanoTime();
            assertTrue(Blocks.identical(local, simple), "simple parallel product under " + policy);
            assertTrue(Blocks.identical(local, cannon), "Cannon product under " + policy);
            for (WorkerStatus st : manager.status()) {
                assertEquals("done", st.getState());
                assertEquals(2, st.getGridSize());
                assertEquals(2, st.getStepsDone());
            }
            for (MatrixWorkerService w : impls) {
                w.outgoing().byOperation().forEach((op, m) -> m.forEach((p, n) -> tally.add(op, p, n)));
            }
            System.out.printf("policy %-12s n=%d k=%d simple %4d ms, cannon %4d ms; calls by protocol %s%n", policy, N,
                    K, (t1 - t0) / 1_000_000, (t2 - t1) / 1_000_000, tally);
            assertEquals(K, tally.calls("multiplyBlock"));
            assertEquals(K, tally.calls("setup"));
            assertEquals(2 * K, tally.calls("step"));
            assertEquals(K, tally.calls("receiveA"), "one shift of A per worker on a 2x2 grid, worker to worker");
            assertEquals(K, tally.calls("receiveB"));
            assertSplit(policy, tally);
        }
    }

    /** What each policy must have chosen; the bulk operations carry 0.5 to 2.5 MB each. */
    private static void assertSplit(String policy, ProtocolTally tally) {
        Map<String, Map<String, Long>> split = tally.byOperation();
        switch (policy) {
            case "fixed:soap" -> split.values().forEach(m -> assertEquals(Set.of("soap"), m.keySet(), policy));
            case "fixed:grpc", "first-common" -> split.values().forEach(m -> assertEquals(Set.of("grpc"),
                    m.keySet(), policy));
            default -> {
                for (String bulk : List.of("multiplyBlock", "setup", "receiveA", "receiveB")) {
                    assertEquals(Set.of("grpc"), split.get(bulk).keySet(), policy + " " + bulk);
                }
                if (policy.equals("size")) {
                    // small requests go over SOAP, including result: its request is a job id even
                    // though its answer is a block (policies see the request only)
                    for (String control : List.of("step", "status", "result")) {
                        assertEquals(Set.of("soap"), split.get(control).keySet(), policy + " " + control);
                    }
                }
            }
        }
    }

    @Test
    void randomDoublesAgreeWithinTheRoundingBound() {
        Random rnd = new Random(7);
        int n = 301;   // not divisible by 2: blocks of 151 and 150
        Block x = Matrices.doubles(rnd, n, n);
        Block y = Matrices.doubles(rnd, n, n);
        Block reference = Blocks.multiply(x, y);
        try (Switchboard sb = Switchboard.connect(registry.endpoint());
             MatrixManager manager = new MatrixManager(sb, MatrixManager.discover(sb, "matrix-worker-"))) {
            // the same kernel in the same order on each row: the simple algorithm is bit for bit the local product
            assertTrue(Blocks.identical(reference, manager.multiplySimple(x, y)));
            double ratio = Matrices.worstErrorRatio(x, y, manager.multiplyCannon(x, y), reference);
            System.out.printf("cannon, random doubles n=%d: worst |c - local| / (2 gamma_n |A||B|) = %.2e%n", n, ratio);
            assertTrue(ratio <= 1, "worst error " + ratio + " of the rounding bound");
        }
    }

    @Test
    void nonSquareProductsAndOneWorker() {
        Random rnd = new Random(9);
        Block x = Matrices.integers(rnd, 37, 23);
        Block y = Matrices.integers(rnd, 23, 41);
        Block reference = Blocks.multiply(x, y);
        try (Switchboard sb = Switchboard.connect(registry.endpoint());
             MatrixManager four = new MatrixManager(sb, MatrixManager.discover(sb, "matrix-worker-"));
             MatrixManager one = new MatrixManager(sb, List.of("matrix-worker-3"))) {
            assertTrue(Blocks.identical(reference, four.multiplySimple(x, y)));
            assertTrue(Blocks.identical(reference, four.multiplyCannon(x, y)));
            assertTrue(Blocks.identical(reference, one.multiplyCannon(x, y)), "a 1x1 grid passes nothing on");
            MatrixManager three = new MatrixManager(sb, List.of("matrix-worker-0", "matrix-worker-1", "matrix-worker-2"));
            assertThrows(IllegalStateException.class, () -> three.multiplyCannon(x, y));
            three.close();
        }
    }

    @Test
    void badBlocksComeBackAsTheDeclaredFaultOverEitherProtocol() {
        try (Switchboard sb = Switchboard.connect(registry.endpoint())) {
            MatrixWorkerStub w = sb.lookup("matrix-worker-0", MatrixWorkerComponent.DESCRIPTOR,
                    MatrixWorkerComponent::stub);
            for (String protocol : List.of("soap", "grpc")) {
                MatrixWorkerStub pinned = w.withOptions(CallOptions.DEFAULT.with(MetaStub.PROTOCOL, protocol));
                MultiplyBlockFaultException e = assertThrows(MultiplyBlockFaultException.class,
                        () -> pinned.multiplyBlock(Blocks.zeros(2, 3), Blocks.zeros(2, 3)));
                assertTrue(e.getFaultInfo().getReason().contains("cannot multiply 2x3 by 2x3"), protocol);
                StepFaultException s = assertThrows(StepFaultException.class, () -> pinned.step("no-such-job", 0));
                assertTrue(s.getFaultInfo().getReason().contains("not set up for job no-such-job"), protocol);
            }
        }
    }
}
