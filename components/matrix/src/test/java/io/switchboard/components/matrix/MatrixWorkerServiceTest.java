package io.switchboard.components.matrix;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;

/** The worker's bookkeeping on its own: repeats are recognised and change nothing. */
class MatrixWorkerServiceTest {
    @Test
    void aRepeatedSetupOrStepChangesNothing() throws Exception {
        Random rnd = new Random(3);
        Block a = Matrices.integers(rnd, 4, 3);
        Block b = Matrices.integers(rnd, 3, 5);
        try (MatrixWorkerService w = new MatrixWorkerService(null, null)) {
            assertTrue(w.setup("job-1", 0, 0, 1, a, b, null, null, null));
            assertFalse(w.setup("job-1", 0, 0, 1, a, b, null, null, null), "the same job again is a repeat");
            assertEquals(1, w.step("job-1", 0));
            assertEquals(1, w.step("job-1", 0), "a step already done is answered, not run again");
            assertTrue(Blocks.identical(Blocks.multiply(a, b), w.result("job-1")));
            assertEquals(1, w.status().getBlocksMultiplied());
            assertEquals("done", w.status().getState());
        }
    }

    @Test
    void aRepeatedDeliveryIsRecognised() throws Exception {
        Block a = Blocks.identity(2);
        try (MatrixWorkerService w = new MatrixWorkerService(null, null)) {
            w.setup("job-2", 0, 1, 2, a, a, "left", "up", "size");
            assertTrue(w.receiveA("job-2", 1, a));
            assertFalse(w.receiveA("job-2", 1, a));
            assertThrows(IllegalStateException.class, () -> w.receiveB("another-job", 1, a));
            assertThrows(IllegalArgumentException.class, () -> w.receiveB("job-2", 2, a), "a 2x2 grid has steps 0 and 1");
            StepFaultException early = assertThrows(StepFaultException.class, () -> w.step("job-2", 1));
            assertTrue(early.getFaultInfo().getReason().contains("before step 0"), early.getMessage());
        }
    }

    @Test
    void workersGivenTheirNeighboursRunCannonWithoutARegistry() {
        Map<String, MatrixWorkerService> byName = new ConcurrentHashMap<>();
        AtomicInteger reached = new AtomicInteger();
        MatrixWorkerService.Neighbours direct = (name, policy) -> {
            reached.incrementAndGet();
            return byName.get(name);
        };
        List<String> names = List.of("w0", "w1", "w2", "w3");
        for (String name : names) {
            byName.put(name, new MatrixWorkerService(direct));
        }
        Random rnd = new Random(5);
        Block a = Matrices.integers(rnd, 9, 7);
        Block b = Matrices.integers(rnd, 7, 8);
        try (MatrixManager manager = new MatrixManager(names, names.stream().map(byName::get).toList())) {
            assertTrue(Blocks.identical(Blocks.multiply(a, b), manager.multiplyCannon(a, b)));
            assertEquals(8, reached.get(), "each of 4 workers reached its left and its up neighbour once");
            assertTrue(Blocks.identical(Blocks.multiply(a, b), manager.multiplyCannon(a, b)));
            assertEquals(8, reached.get(), "and kept them for the next job");
            assertTrue(Blocks.identical(Blocks.multiply(a, b), manager.multiplySimple(a, b)));
        }
        assertFalse(byName.get("w0").shutdown(), "a worker with its own neighbours has no process to stop");
    }

    @Test
    void badInputIsADeclaredFault() {
        try (MatrixWorkerService w = new MatrixWorkerService(null, null)) {
            MultiplyBlockFaultException e = assertThrows(MultiplyBlockFaultException.class,
                    () -> w.multiplyBlock(Blocks.zeros(2, 3), Blocks.zeros(2, 3)));
            assertTrue(e.getFaultInfo().getReason().contains("cannot multiply 2x3 by 2x3"));
            assertThrows(IllegalArgumentException.class,
                    () -> w.setup("j", 2, 0, 2, Blocks.identity(1), Blocks.identity(1), "l", "u", null));
            assertThrows(IllegalArgumentException.class,
                    () -> w.setup("j", 0, 0, 2, Blocks.identity(1), Blocks.identity(1), "l", "u", "no-such-policy"));
            assertFalse(w.shutdown(), "a worker without a way to stop says so");
        }
    }
}
