package io.switchboard.soap.cxf;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.switchboard.components.matrix.MatrixWorkerComponent;
import io.switchboard.components.matrix.MatrixWorkerService;
import io.switchboard.registry.testing.RunningRegistry;
import jakarta.xml.ws.soap.SOAPFaultException;
import java.net.URI;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import switchboard.matrix.Block;
import switchboard.matrix.MatrixWorker;
import switchboard.matrix.MatrixWorkerPortType;
import switchboard.matrix.MultiplyBlockFault_Exception;
import switchboard.matrix.ProtocolCount;
import switchboard.matrix.StepFault_Exception;
import switchboard.matrix.WorkerStatus;

/**
 * The matrix worker called through CXF's wsdl2java client, every operation: a block product, and
 * one worker playing a whole Cannon job of a 2x2 grid whose left and up neighbours are itself
 * (found in the registry), so its own calls show in {@code status}.
 */
class MatrixWorkerCxfTest {
    private static RunningRegistry registry;
    private static MatrixWorkerService worker;
    private static final CountDownLatch SHUTDOWN = new CountDownLatch(1);
    private static String address;
    private static MatrixWorkerPortType matrix;

    @BeforeAll
    static void start() throws Exception {
        registry = RunningRegistry.start();
        worker = new MatrixWorkerService(registry.url(), SHUTDOWN::countDown);
        address = CxfClients.soapAddress(registry.serve(MatrixWorkerComponent.skeleton(worker)));
        matrix = CxfClients.at(new MatrixWorker(URI.create(address + "?wsdl").toURL()).getMatrixWorkerSoapPort(), address);
    }

    @AfterAll
    static void stop() {
        registry.close();
        worker.close();
    }

    private static Block block(int rows, int cols, double... values) {
        Block b = new Block();
        b.setRows(rows);
        b.setCols(cols);
        b.getValues().addAll(EchoCxfTest.boxed(values));
        return b;
    }

    private static void assertSameBlock(Block expected, Block actual) {
        assertEquals(expected.getRows(), actual.getRows(), "rows");
        assertEquals(expected.getCols(), actual.getCols(), "cols");
        EchoCxfTest.assertSameDoubles(expected.getValues(), actual.getValues());
    }

    @Test
    void servesTheWsdlTheClientWasGeneratedFrom() throws Exception {
        CxfClients.assertServesTheGeneratedWsdl(address, "/io/switchboard/components/matrix/MatrixWorker.wsdl");
    }

    @Test
    void multiplyBlockMultipliesExactly() throws Exception {
        // values whose products and sums are exact in binary, so the answer has one right form
        Block a = block(2, 3, 1, 2, 3, -4, 0.5, -0.0);
        Block b = block(3, 2, 7, 8, 9, 10, 11, 12);
        assertSameBlock(block(2, 2, 58, 64, -23.5, -27), matrix.multiplyBlock(a, b));
        // the infinities and NaN of IEEE arithmetic travel too
        assertSameBlock(block(1, 1, Double.POSITIVE_INFINITY), matrix.multiplyBlock(block(1, 1, Double.MAX_VALUE),
                block(1, 1, 2)));
        assertSameBlock(block(1, 1, Double.NaN), matrix.multiplyBlock(block(1, 1, Double.POSITIVE_INFINITY),
                block(1, 1, 0)));
        assertSameBlock(block(0, 0), matrix.multiplyBlock(block(0, 0), block(0, 0)));
    }

    @Test
    void blocksThatDoNotMultiplyAreTheDeclaredFault() {
        MultiplyBlockFault_Exception e = assertThrows(MultiplyBlockFault_Exception.class,
                () -> matrix.multiplyBlock(block(2, 3, 1, 2, 3, 4, 5, 6), block(2, 2, 1, 2, 3, 4)));
        assertTrue(e.getFaultInfo().getReason().contains("2x3"), e.getFaultInfo().getReason());
    }

    @Test
    void aWholeCannonJobRunsThroughEveryOperation() throws Exception {
        String job = "cxf-" + System.nanoTime();
        // the worker at (0, 0) of a 2x2 grid, its left and up neighbours itself, by its registry name
        assertTrue(matrix.setup(job, 0, 0, 2, block(2, 2, 1, 2, 3, 4), block(2, 2, 5, 6, 7, 8),
                "MatrixWorker", "MatrixWorker", null));
        assertFalse(matrix.setup(job, 0, 0, 2, block(1, 1, 9), block(1, 1, 9), "MatrixWorker", "MatrixWorker", null),
                "a repeat of the setup changes nothing");
        WorkerStatus ready = matrix.status();
        assertEquals("ready", ready.getState());
        assertEquals(job, ready.getJob());
        assertEquals(2, ready.getGridSize());
        assertEquals(0, ready.getStepsDone());

        // the blocks of step 1 arrive first; what the worker passes itself in step 0 then comes second
        assertTrue(matrix.receiveA(job, 1, block(2, 2, -1, 0, 0.25, 1)));
        assertFalse(matrix.receiveA(job, 1, block(2, 2, 0, 0, 0, 0)), "a repeat delivery is recognised");
        assertTrue(matrix.receiveB(job, 1, block(2, 2, 2, -0.0, 4, 1)));

        assertEquals(1, matrix.step(job, 0));
        assertEquals(1, matrix.step(job, 0), "a repeat of a step already done changes nothing");
        assertEquals("running", matrix.status().getState());
        assertEquals(2, matrix.step(job, 1));

        // c = a0 b0 + a1 b1, all exact: [[19, 22], [43, 50]] + [[-2, 0], [4.5, 1]]
        assertSameBlock(block(2, 2, 17, 22, 47.5, 51), matrix.result(job));

        WorkerStatus done = matrix.status();
        assertEquals("done", done.getState());
        assertEquals(2, done.getStepsDone());
        Map<String, Long> outgoing = new TreeMap<>();
        for (ProtocolCount c : done.getOutgoing().getItem()) {
            outgoing.merge(c.getOperation(), c.getCalls(), Long::sum);
        }
        assertEquals(Map.of("receiveA", 1L, "receiveB", 1L), outgoing, "its own calls to its neighbours, in step 0");

        StepFault_Exception late = assertThrows(StepFault_Exception.class, () -> matrix.step(job, 2));
        assertTrue(late.getFaultInfo().getReason().contains("steps are 0 to 1"), late.getFaultInfo().getReason());
        StepFault_Exception other = assertThrows(StepFault_Exception.class, () -> matrix.step("another job", 0));
        assertTrue(other.getFaultInfo().getReason().contains("not set up"), other.getFaultInfo().getReason());
    }

    @Test
    void aStatusWithNoJobLeavesTheJobOut() {
        MatrixWorkerService idle = new MatrixWorkerService(null, null);
        try (RunningRegistry other = RunningRegistry.start()) {
            String at = CxfClients.soapAddress(other.serve(MatrixWorkerComponent.skeleton(idle)));
            MatrixWorkerPortType port = CxfClients.at(new MatrixWorker(URI.create(at + "?wsdl").toURL())
                    .getMatrixWorkerSoapPort(), at);
            WorkerStatus status = port.status();
            assertEquals("idle", status.getState());
            assertNull(status.getJob(), "an absent job reads as null");
            assertEquals(List.of(), status.getOutgoing().getItem());
            assertFalse(port.shutdown(), "a worker with no way to stop refuses");
        } catch (Exception e) {
            throw new AssertionError(e);
        }
    }

    @Test
    void shutdownAnswersFirstThenStops() throws Exception {
        assertTrue(matrix.shutdown());
        assertTrue(SHUTDOWN.await(60, TimeUnit.SECONDS), "the worker ran its way to stop");
    }

    // ---- hostile

    @Test
    void theResultOfAJobTheWorkerNeverHadIsAFaultNotAHang() {
        SOAPFaultException e = assertThrows(SOAPFaultException.class, () -> matrix.result("no such job"));
        assertTrue(e.getFault().getFaultString().contains("no such job"), e.getFault().getFaultString());
    }

    @Test
    void aBlockForAJobTheWorkerDoesNotHoldIsAFault() {
        SOAPFaultException e = assertThrows(SOAPFaultException.class,
                () -> matrix.receiveB("no such job", 1, block(1, 1, 1)));
        assertTrue(e.getFault().getFaultString().contains("not set up"), e.getFault().getFaultString());
    }
}
