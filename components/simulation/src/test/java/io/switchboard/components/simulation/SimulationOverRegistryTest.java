package io.switchboard.components.simulation;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.switchboard.components.simulation.optimizer.FitFaultException;
import io.switchboard.components.simulation.optimizer.FitResult;
import io.switchboard.components.simulation.optimizer.OptimizerComponent;
import io.switchboard.components.simulation.optimizer.OptimizerService;
import io.switchboard.components.simulation.optimizer.OptimizerStub;
import io.switchboard.components.simulation.optimizer.ProtocolCount;
import io.switchboard.metastub.CallRecord;
import io.switchboard.server.ComponentServer;
import io.switchboard.registry.server.RegistryServer;
import io.switchboard.client.Switchboard;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.ConcurrentHashMap;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;
import org.junit.jupiter.api.Test;

/**
 * The Systems Biology Workbench scenario over a registry: the simulator and the optimizer each
 * exported by a server of its own and bound in the registry; the client knows only the registry.
 * It makes synthetic data with known parameters through the simulator, then asks the optimizer to
 * fit them from a guess off by 40-80% in every parameter; the optimizer finds the simulator in
 * the registry and calls it a few hundred times.
 */
class SimulationOverRegistryTest {
    private static final double[] TRUE = EnzymeModelTest.TRUE;
    private static final double[] INITIAL = EnzymeModelTest.INITIAL;
    private static final double[] GUESS = {0.5 * 1.6, 2.0 * 0.6, 1.0 * 1.8, 1.5 * 0.7, 0.3 * 1.4};
    /**
     * Noise-free data, so the fit can only be as far off as the simulation's error lets it; with
     * the integrator at 1e-10 relative and forward differences of 1e-5 the parameters come back to
     * about 1e-7 relative. 1e-4 is the stated tolerance, leaving room for a different machine.
     */
    private static final double TOLERANCE = 1e-4;
    private static RegistryServer registry;
    private static ComponentServer simulatorServer;
    private static ComponentServer optimizerServer;
    private static SimulatorService simulator;
    private static double[] times;

    @BeforeAll
    static void start() {
        registry = RegistryServer.builder().secret("t").start();
        simulatorServer = ComponentServer.builder().registry(registry.endpoint(), "t").build();
        simulator = new SimulatorService();
        simulatorServer.export(SimulatorComponent.skeleton(simulator));
        optimizerServer = ComponentServer.builder().registry(registry.endpoint(), "t").build();
        optimizerServer.export(OptimizerComponent.skeleton(new OptimizerService(registry.endpoint())));
        times = new double[200];
        for (int i = 0; i < times.length; i++) {
            times[i] = 0.1 * (i + 1);
        }
    }

    @AfterAll
    static void stop() {
        optimizerServer.close();
        simulatorServer.close();
        registry.close();
    }

    @ParameterizedTest
    @ValueSource(strings = {"adaptive", "size"})
    void optimizerRecoversTheParametersTheDataWereMadeWith(String policy) throws Exception {
        Map<String, Map<String, Integer>> clientCalls = new ConcurrentHashMap<>();
        try (Switchboard sb = Switchboard.builder(registry.endpoint()).policy(io.switchboard.metastub.Policies
                        .byName(policy)).listener(r -> count(clientCalls, r)).connect()) {
            SimulatorStub sim = sb.lookup(SimulatorComponent.DESCRIPTOR, SimulatorComponent::stub);
            OptimizerStub optimizer = sb.lookup(OptimizerComponent.DESCRIPTOR, OptimizerComponent::stub);
            assertEquals(EnzymeModel.PARAMETERS, sim.describe().getParameters());
            double[] observed = sim.simulate(TRUE, INITIAL, times);
            assertEquals(times.length * 4, observed.length);

            long t0 = System.nanoTime();
            FitResult fit = optimizer.fit(GUESS, INITIAL, times, observed, "Simulator", policy);
            long ms = (System.nanoTime() - t0) / 1_000_000;
            double worst = 0;
            for (int j = 0; j < TRUE.length; j++) {
                double rel = Math.abs(fit.getParameters()[j] / TRUE[j] - 1);
                worst = Math.max(worst, rel);
                assertTrue(rel < TOLERANCE, EnzymeModel.PARAMETERS.get(j) + " = " + fit.getParameters()[j] + ", true "
                        + TRUE[j]);
            }
            double[] exact = EnzymeModel.analyticSteadyState(fit.getParameters(), INITIAL);
            assertNotNull(fit.getSteadyState());
            for (int i = 0; i < 4; i++) {
                assertEquals(exact[i], fit.getSteadyState()[i], 1e-7 * Math.max(1, exact[i]));
            }
            Map<String, Map<String, Long>> optimizerCalls = new TreeMap<>();
            for (ProtocolCount pc : fit.getCalls()) {
                optimizerCalls.computeIfAbsent(pc.getOperation(), o -> new TreeMap<>()).put(pc.getProtocol(), pc.getCalls());
            }
            long simulateCalls = optimizerCalls.get("simulate").values().stream().mapToLong(Long::longValue).sum();
            assertEquals(fit.getEvaluations(), simulateCalls);
            System.out.printf("policy %-8s fit in %d ms: %d iterations, %d simulations, cost %.2e, worst parameter "
                            + "error %.1e; optimizer's calls %s; client's calls %s%n", policy, ms, fit.getIterations(),
                    fit.getEvaluations(), fit.getCost(), worst, optimizerCalls, new TreeMap<>(clientCalls));
            if (policy.equals("size")) {
                // a time course request carries 200 times (1.6 kB): bulk; a steady state, 9 numbers: SOAP
                assertEquals(Map.of("grpc", simulateCalls), optimizerCalls.get("simulate"));
                assertEquals(Map.of("soap", 1L), optimizerCalls.get("steadyState"));
                assertEquals(Map.of("grpc", 1), clientCalls.get("fit"));
                assertEquals(Map.of("soap", 1), clientCalls.get("describe"));
            }
        }
    }

    private static void count(Map<String, Map<String, Integer>> calls, CallRecord r) {
        calls.computeIfAbsent(r.operation(), o -> new ConcurrentHashMap<>()).merge(r.protocol(), 1, Integer::sum);
    }

    @Test
    void badInputIsADeclaredFaultOverTheWire() {
        try (Switchboard sb = Switchboard.connect(registry.endpoint())) {
            SimulatorStub sim = sb.lookup(SimulatorComponent.DESCRIPTOR, SimulatorComponent::stub);
            SimulateFaultException e = assertThrows(SimulateFaultException.class,
                    () -> sim.simulate(new double[] {1, 2}, INITIAL, times));
            assertTrue(e.getFaultInfo().getReason().contains("takes 5 parameters"), e.getMessage());
            SteadyStateFaultException none = assertThrows(SteadyStateFaultException.class,
                    () -> sim.steadyState(new double[] {2, 2, 1, 1.5, 0.3}, INITIAL));
            assertTrue(none.getFaultInfo().getReason().contains("no steady state"), none.getMessage());
            OptimizerStub optimizer = sb.lookup(OptimizerComponent.DESCRIPTOR, OptimizerComponent::stub);
            FitFaultException f = assertThrows(FitFaultException.class,
                    () -> optimizer.fit(GUESS, INITIAL, times, new double[7], null, null));
            assertTrue(f.getFaultInfo().getReason().contains("4 values per time point"), f.getMessage());
            FitFaultException missing = assertThrows(FitFaultException.class,
                    () -> optimizer.fit(new double[] {1, 1, 1, 1, -1}, INITIAL, times, new double[800], null, null));
            assertTrue(missing.getFaultInfo().getReason().contains("positive"), missing.getMessage());
            List<String> species = sim.describe().getSpecies();
            assertEquals(List.of("S", "E", "ES", "P"), species);
        }
    }
}
