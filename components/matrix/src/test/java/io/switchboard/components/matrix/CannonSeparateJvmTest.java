package io.switchboard.components.matrix;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.switchboard.registry.server.RegistryServer;
import io.switchboard.client.Switchboard;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Random;
import org.junit.jupiter.api.Test;

/**
 * Cannon's algorithm as it would run across machines: nine workers, each a JVM of its own, bound
 * in a registry that the test runs; the manager here knows only the registry's address, and the
 * workers find their neighbours there and shift blocks to each other directly. First on a 2x2
 * grid (four of them), then on 3x3 (all nine); then every worker is stopped through its
 * {@code shutdown} operation and must leave the registry and exit.
 */
class CannonSeparateJvmTest {
    private static final String SECRET = "cannon-test";

    @Test
    void cannonAcrossNineWorkerProcesses() throws Exception {
        Path logs = Files.createDirectories(Path.of("target", "worker-logs"));
        List<WorkerJvm> jvms = new ArrayList<>();
        try (RegistryServer registry = RegistryServer.builder().secret(SECRET).start()) {
            long t0 = System.nanoTime();
            for (int w = 0; w < 9; w++) {
                String name = "matrix-worker-" + w;
                jvms.add(WorkerJvm.start(logs.resolve(name + ".err"), registry.endpoint(), name, SECRET));
            }
            for (WorkerJvm jvm : jvms) {
                jvm.awaitReady();
            }
            long started = System.nanoTime();
            ProtocolTally tally = new ProtocolTally();
            try (Switchboard sb = Switchboard.builder(registry.endpoint()).listener(tally).connect()) {
                List<String> all = MatrixManager.discover(sb, "matrix-worker-");
                assertEquals(9, all.size());
                Random rnd = new Random(5);

                try (MatrixManager four = new MatrixManager(sb, all.subList(0, 4))) {
                    Block a = Matrices.integers(rnd, 240, 240);
                    Block b = Matrices.integers(rnd, 240, 240);
                    assertTrue(Blocks.identical(Blocks.multiply(a, b), four.multiplyCannon(a, b)), "2x2 grid");
                }
                long t4 = System.nanoTime();
                try (MatrixManager nine = new MatrixManager(sb, all)) {
                    Block a = Matrices.integers(rnd, 300, 300);
                    Block b = Matrices.integers(rnd, 300, 300);
                    assertTrue(Blocks.identical(Blocks.multiply(a, b), nine.multiplyCannon(a, b)), "3x3 grid");
                    Block x = Matrices.doubles(rnd, 301, 299);
                    Block y = Matrices.doubles(rnd, 299, 302);
                    double ratio = Matrices.worstErrorRatio(x, y, nine.multiplyCannon(x, y), Blocks.multiply(x, y));
                    assertTrue(ratio <= 1, "worst error " + ratio + " of the rounding bound");
                    long t9 = System.nanoTime();

                    ProtocolTally workers = new ProtocolTally();
                    for (WorkerStatus st : nine.status()) {
                        assertEquals("done", st.getState());
                        assertEquals(3, st.getGridSize());
                        st.getOutgoing().forEach(pc -> workers.add(pc.getOperation(), pc.getProtocol(), pc.getCalls()));
                    }
                    // 2x2: one shift of each block per worker; 3x3: two per worker, twice
                    assertEquals(4 + 9 * 2 * 2, workers.calls("receiveA"));
                    assertEquals(workers.calls("receiveA"), workers.calls("receiveB"));
                    // over the bulk protocol, but for adaptive's re-probe: a runner-up unused for 10 s gets one
                    // call (AdaptivePolicy.REPROBE_NANOS), so a worker on a slow machine may send one block over
                    // SOAP per neighbour; on a loaded machine 2 of 40 went so
                    long shifts = workers.calls("receiveA") + workers.calls("receiveB");
                    long bulk = workers.calls("receiveA", "grpc") + workers.calls("receiveB", "grpc");
                    assertTrue(bulk >= shifts - 2 * 9, "blocks between workers over the bulk protocol: " + workers);
                    System.out.printf("9 worker JVMs ready in %d ms; cannon 2x2 n=240 %d ms; 3x3 n=300 and "
                                    + "301x299x302 %d ms; random doubles worst error %.2e of the bound%n",
                            (started - t0) / 1_000_000, (t4 - started) / 1_000_000, (t9 - t4) / 1_000_000, ratio);
                    System.out.println("manager's calls by protocol: " + tally);
                    System.out.println("workers' calls to each other by protocol: " + workers);

                    assertEquals(9, nine.shutdownWorkers());
                }
                for (WorkerJvm jvm : jvms) {
                    assertTrue(jvm.exitsCleanly(20), "a worker stopped through shutdown exits with 0");
                }
                assertEquals(List.of(), MatrixManager.discover(sb, "matrix-worker-"), "they unbound themselves");
            }
        } finally {
            for (WorkerJvm jvm : jvms) {
                jvm.close();
            }
        }
    }
}
