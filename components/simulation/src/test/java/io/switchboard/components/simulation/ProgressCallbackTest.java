package io.switchboard.components.simulation;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.switchboard.components.simulation.progress.Progress;
import io.switchboard.components.simulation.progress.ProgressComponent;
import io.switchboard.server.ComponentServer;
import io.switchboard.server.ExportedCallback;
import io.switchboard.registry.server.RegistryServer;
import io.switchboard.client.Switchboard;
import java.util.Arrays;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * Callbacks: a client exports a Progress component on the fly ({@link ExportedCallback#export}),
 * passes its registry name to the simulator, which finds it in the registry and reports to it
 * while the time course is computed. Nobody is given a port: the simulator sees only the name.
 */
class ProgressCallbackTest {
    private static RegistryServer registry;
    private static ComponentServer simulatorServer;
    private static SimulatorService simulator;
    private static double[] times;

    @BeforeAll
    static void start() {
        registry = RegistryServer.builder().secret("t").start();
        simulatorServer = ComponentServer.builder().registry(registry.endpoint(), "t").build();
        simulator = new SimulatorService(registry.endpoint());
        simulatorServer.export(SimulatorComponent.skeleton(simulator));
        times = new double[2000];
        for (int i = 0; i < times.length; i++) {
            times[i] = 0.05 * (i + 1);
        }
    }

    @AfterAll
    static void stop() {
        simulatorServer.close();
        simulator.close();
        registry.close();
    }

    private record Report(int done, int total, double time, double[] state) {
    }

    @Test
    void theServerCallsTheClientBackDuringTheLongCallAndTheNameIsGoneAfterClose() throws Exception {
        List<Report> reports = new CopyOnWriteArrayList<>();
        CountDownLatch firstReportArrived = new CountDownLatch(1);
        CountDownLatch mayContinue = new CountDownLatch(1);
        Progress progress = (done, total, time, state) -> {
            reports.add(new Report(done, total, time, state));
            firstReportArrived.countDown();
            try {
                // the simulator waits for each report: holding the first one holds the whole call
                assertTrue(mayContinue.await(60, TimeUnit.SECONDS), "the test never let the simulation go on");
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
        };
        ExecutorService caller = Executors.newSingleThreadExecutor();
        String name;
        try (Switchboard sb = Switchboard.builder(registry.endpoint()).secret("t").connect()) {
            SimulatorStub sim = sb.lookup(SimulatorComponent.DESCRIPTOR, SimulatorComponent::stub);
            double[] plain = sim.simulate(EnzymeModelTest.TRUE, EnzymeModelTest.INITIAL, times);
            try (ExportedCallback callback = ExportedCallback.export(sb, ProgressComponent.skeleton(progress))) {
                name = callback.name();
                assertTrue(name.startsWith("Progress-callback-"), name);
                assertEquals(1, sb.registry().lookup(name).size(), "bound while open");
                assertEquals(10, callback.entry().leaseSeconds(), "a lease, so a dead client's callback goes");

                Future<double[]> call = caller.submit(() -> sim.simulateWithProgress(EnzymeModelTest.TRUE,
                        EnzymeModelTest.INITIAL, times, name, 10));
                assertTrue(firstReportArrived.await(60, TimeUnit.SECONDS), "no progress report arrived");
                assertFalse(call.isDone(), "a report arrived while the call was still running");
                assertEquals(1, reports.size());
                mayContinue.countDown();
                double[] course = call.get(60, TimeUnit.SECONDS);

                assertArrayEquals(plain, course, "reporting does not change the time course");
                assertTrue(reports.size() >= 2 && reports.size() <= 10, "reports: " + reports.size());
                int previous = 0;
                for (Report r : reports) {
                    assertTrue(r.done() > previous, "reports in order: " + r.done() + " after " + previous);
                    previous = r.done();
                    assertEquals(times.length, r.total());
                    assertEquals(times[r.done() - 1], r.time());
                    assertArrayEquals(Arrays.copyOfRange(course, (r.done() - 1) * 4, r.done() * 4), r.state(),
                            "the state reported at " + r.done() + " is the course's");
                }
                assertEquals(times.length, previous, "the last report says everything is done");
            }
            assertTrue(sb.registry().lookup(name).isEmpty(), "closing the callback unbinds its name");
            SimulateWithProgressFaultException gone = assertThrows(SimulateWithProgressFaultException.class,
                    () -> sim.simulateWithProgress(EnzymeModelTest.TRUE, EnzymeModelTest.INITIAL, times, name, 10));
            assertTrue(gone.getFaultInfo().getReason().contains("no progress callback is bound under '" + name + "'"),
                    gone.getFaultInfo().getReason());
        } finally {
            mayContinue.countDown();
            caller.shutdownNow();
        }
    }

    @Test
    void aFailingCallbackEndsTheCallWithAFaultThatSaysSo() {
        try (Switchboard sb = Switchboard.builder(registry.endpoint()).secret("t").connect();
             ExportedCallback callback = ExportedCallback.export(sb, ProgressComponent.skeleton((done, total, time, state) -> {
                 throw new IllegalStateException("disk full at " + done);
             }))) {
            SimulatorStub sim = sb.lookup(SimulatorComponent.DESCRIPTOR, SimulatorComponent::stub);
            SimulateWithProgressFaultException e = assertThrows(SimulateWithProgressFaultException.class,
                    () -> sim.simulateWithProgress(EnzymeModelTest.TRUE, EnzymeModelTest.INITIAL, times,
                            callback.name(), 3));
            assertTrue(e.getFaultInfo().getReason().contains("failed") && e.getFaultInfo().getReason().contains("disk full"),
                    e.getFaultInfo().getReason());
            SimulateWithProgressFaultException bad = assertThrows(SimulateWithProgressFaultException.class,
                    () -> sim.simulateWithProgress(EnzymeModelTest.TRUE, EnzymeModelTest.INITIAL, times,
                            callback.name(), 0));
            assertTrue(bad.getFaultInfo().getReason().contains("reports must be"), bad.getFaultInfo().getReason());
        }
    }

    @Test
    void closingTheSwitchboardUnbindsItsCallbacksToo() {
        String name;
        try (Switchboard sb = Switchboard.builder(registry.endpoint()).secret("t").connect()) {
            name = ExportedCallback.export(sb, ProgressComponent.skeleton((done, total, time, state) -> { })).name();
            assertEquals(1, sb.registry().lookup(name).size());
        }
        try (Switchboard sb = Switchboard.connect(registry.endpoint())) {
            assertTrue(sb.registry().lookup(name).isEmpty());
        }
    }
}
