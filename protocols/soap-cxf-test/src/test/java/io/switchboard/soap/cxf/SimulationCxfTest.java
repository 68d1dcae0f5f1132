package io.switchboard.soap.cxf;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.switchboard.components.simulation.ModelInfo;
import io.switchboard.components.simulation.SimulateFaultException;
import io.switchboard.components.simulation.SimulatorComponent;
import io.switchboard.components.simulation.SimulatorService;
import io.switchboard.components.simulation.SteadyStateFaultException;
import io.switchboard.components.simulation.optimizer.FitResult;
import io.switchboard.components.simulation.optimizer.OptimizerComponent;
import io.switchboard.components.simulation.optimizer.OptimizerService;
import io.switchboard.components.simulation.progress.ProgressComponent;
import io.switchboard.registry.testing.RunningRegistry;
import java.net.URI;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.CopyOnWriteArrayList;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import switchboard.optimizer.FitFault_Exception;
import switchboard.optimizer.Optimizer;
import switchboard.optimizer.OptimizerPortType;
import switchboard.progress.ProgressPortType;
import switchboard.simulator.SimulateFault_Exception;
import switchboard.simulator.SimulateWithProgressFault_Exception;
import switchboard.simulator.Simulator;
import switchboard.simulator.SimulatorPortType;
import switchboard.simulator.SteadyStateFault_Exception;

/**
 * The simulation components called through CXF's wsdl2java clients, every operation of the
 * simulator, the optimizer and the progress callback: each answer compared bit for bit with what
 * the same implementation answers in process, declared faults as their typed exceptions.
 */
class SimulationCxfTest {
    private static final double[] PARAMETERS = {0.5, 2.0, 1.0, 1.5, 0.3};
    private static final double[] INITIAL = {2, 1, 0, 0};
    private static final double[] TIMES = {0.25, 0.5, 1, 2, 4, 8};

    private static RunningRegistry registry;
    /** The simulator as it runs in process, for the answers to compare with. */
    private static SimulatorService local;
    private static SimulatorService served;
    private static final List<Report> REPORTS = new CopyOnWriteArrayList<>();
    private static String simulatorAddress;
    private static String optimizerAddress;
    private static String progressAddress;
    private static SimulatorPortType simulator;
    private static OptimizerPortType optimizer;
    private static ProgressPortType progress;

    private record Report(int done, int total, double time, double[] state) {
    }

    @BeforeAll
    static void start() throws Exception {
        registry = RunningRegistry.start();
        local = new SimulatorService();
        served = new SimulatorService(registry.url());
        simulatorAddress = CxfClients.soapAddress(registry.serve(SimulatorComponent.skeleton(served)));
        optimizerAddress = CxfClients.soapAddress(registry.serve(
                OptimizerComponent.skeleton(new OptimizerService(registry.url()))));
        // bound as "Progress": the name simulateWithProgress is given
        progressAddress = CxfClients.soapAddress(registry.serve(ProgressComponent.skeleton(
                (done, total, time, state) -> REPORTS.add(new Report(done, total, time, state)))));
        simulator = CxfClients.at(new Simulator(URI.create(simulatorAddress + "?wsdl").toURL()).getSimulatorSoapPort(),
                simulatorAddress);
        optimizer = CxfClients.at(new Optimizer(URI.create(optimizerAddress + "?wsdl").toURL()).getOptimizerSoapPort(),
                optimizerAddress);
        progress = CxfClients.at(new switchboard.progress.Progress(URI.create(progressAddress + "?wsdl").toURL())
                .getProgressSoapPort(), progressAddress);
    }

    @AfterAll
    static void stop() {
        registry.close();
        served.close();
        local.close();
    }

    private static List<Double> list(double... values) {
        return EchoCxfTest.boxed(values);
    }

    @Test
    void servesTheWsdlsTheClientsWereGeneratedFrom() throws Exception {
        CxfClients.assertServesTheGeneratedWsdl(simulatorAddress, "/io/switchboard/components/simulation/Simulator.wsdl");
        CxfClients.assertServesTheGeneratedWsdl(optimizerAddress,
                "/io/switchboard/components/simulation/optimizer/Optimizer.wsdl");
        CxfClients.assertServesTheGeneratedWsdl(progressAddress,
                "/io/switchboard/components/simulation/progress/Progress.wsdl");
    }

    @Test
    void describeNamesTheModel() {
        ModelInfo expected = local.describe();
        switchboard.simulator.ModelInfo actual = simulator.describe();
        assertEquals(expected.getName(), actual.getName());
        assertEquals(expected.getSpecies(), actual.getSpecies().getItem());
        assertEquals(expected.getParameters(), actual.getParameters().getItem());
    }

    @Test
    void simulateAnswersTheTimeCourseBitForBit() throws Exception {
        double[] expected = local.simulate(PARAMETERS, INITIAL, TIMES);
        EchoCxfTest.assertSameDoubles(list(expected), simulator.simulate(list(PARAMETERS), list(INITIAL), list(TIMES)));
    }

    @Test
    void simulateOfAModelItCannotRunIsTheDeclaredFault() {
        SimulateFaultException expected = assertThrows(SimulateFaultException.class,
                () -> local.simulate(new double[] {1, 2}, INITIAL, TIMES));
        SimulateFault_Exception e = assertThrows(SimulateFault_Exception.class,
                () -> simulator.simulate(list(1, 2), list(INITIAL), list(TIMES)));
        assertEquals(expected.getFaultInfo().getReason(), e.getFaultInfo().getReason());
    }

    @Test
    void steadyStateAnswersBitForBit() throws Exception {
        double[] expected = local.steadyState(PARAMETERS, INITIAL);
        EchoCxfTest.assertSameDoubles(list(expected), simulator.steadyState(list(PARAMETERS), list(INITIAL)));

        SteadyStateFaultException bad = assertThrows(SteadyStateFaultException.class,
                () -> local.steadyState(PARAMETERS, new double[] {1}));
        SteadyStateFault_Exception e = assertThrows(SteadyStateFault_Exception.class,
                () -> simulator.steadyState(list(PARAMETERS), list(1)));
        assertEquals(bad.getFaultInfo().getReason(), e.getFaultInfo().getReason());
    }

    @Test
    void simulateWithProgressReportsToTheCallbackAndAnswersTheSameCourse() throws Exception {
        REPORTS.clear();
        double[] expected = local.simulate(PARAMETERS, INITIAL, TIMES);
        EchoCxfTest.assertSameDoubles(list(expected),
                simulator.simulateWithProgress(list(PARAMETERS), list(INITIAL), list(TIMES), "Progress", 3));
        assertTrue(!REPORTS.isEmpty() && REPORTS.size() <= 3, "reports: " + REPORTS.size());
        Report last = REPORTS.get(REPORTS.size() - 1);
        assertEquals(TIMES.length, last.done());
        assertEquals(TIMES.length, last.total());
        assertEquals(TIMES[TIMES.length - 1], last.time());
        EchoCxfTest.assertSameDoubles(list(Arrays.copyOfRange(expected, expected.length - 4, expected.length)),
                list(last.state()));
    }

    @Test
    void simulateWithProgressToANameNoOneHoldsIsTheDeclaredFaultNotAHang() {
        SimulateWithProgressFault_Exception e = assertThrows(SimulateWithProgressFault_Exception.class,
                () -> simulator.simulateWithProgress(list(PARAMETERS), list(INITIAL), list(TIMES), "NoSuchProgress", 3));
        assertTrue(e.getFaultInfo().getReason().contains("no progress callback is bound under 'NoSuchProgress'"),
                e.getFaultInfo().getReason());
        SimulateWithProgressFault_Exception tooMany = assertThrows(SimulateWithProgressFault_Exception.class,
                () -> simulator.simulateWithProgress(list(PARAMETERS), list(INITIAL), list(TIMES), "Progress",
                        SimulatorService.MAX_REPORTS + 1));
        assertTrue(tooMany.getFaultInfo().getReason().contains("reports must be 1 to " + SimulatorService.MAX_REPORTS),
                tooMany.getFaultInfo().getReason());
    }

    @Test
    void reportCarriesEveryValueExactly() {
        REPORTS.clear();
        double[] state = {Double.NaN, Double.MIN_VALUE, Double.NEGATIVE_INFINITY, 1.0 / 3};
        progress.report(3, Integer.MAX_VALUE, -0.0, list(state));
        progress.report(Integer.MIN_VALUE, 0, Double.POSITIVE_INFINITY, list());
        assertEquals(2, REPORTS.size());
        Report first = REPORTS.get(0);
        assertEquals(3, first.done());
        assertEquals(Integer.MAX_VALUE, first.total());
        assertEquals(Double.doubleToLongBits(-0.0), Double.doubleToLongBits(first.time()));
        EchoCxfTest.assertSameDoubles(list(state), list(first.state()));
        Report second = REPORTS.get(1);
        assertEquals(Integer.MIN_VALUE, second.done());
        assertEquals(Double.POSITIVE_INFINITY, second.time());
        assertEquals(0, second.state().length);
    }

    private static Map<String, Long> callsByOperation(List<String> operations, List<Long> calls) {
        Map<String, Long> byOperation = new TreeMap<>();
        for (int i = 0; i < operations.size(); i++) {
            byOperation.merge(operations.get(i), calls.get(i), Long::sum);
        }
        return byOperation;
    }

    @Test
    void fitFindsTheSameParametersAsInProcess() throws Exception {
        double[] observed = local.simulate(PARAMETERS, INITIAL, TIMES);
        double[] guess = Arrays.stream(PARAMETERS).map(p -> p * 1.25).toArray();
        FitResult expected = new OptimizerService(registry.url()).fit(guess, INITIAL, TIMES, observed, null, null);

        switchboard.optimizer.FitResult actual = optimizer.fit(list(guess), list(INITIAL), list(TIMES), list(observed),
                null, null);
        EchoCxfTest.assertSameDoubles(list(expected.getParameters()), actual.getParameters());
        assertEquals(Double.doubleToLongBits(expected.getCost()), Double.doubleToLongBits(actual.getCost()));
        assertEquals(expected.getIterations(), actual.getIterations());
        assertEquals(expected.getEvaluations(), actual.getEvaluations());
        EchoCxfTest.assertSameDoubles(list(expected.getSteadyState()), actual.getSteadyState());
        // the protocols the optimizer picked may differ from run to run; the calls it made may not
        assertEquals(
                callsByOperation(expected.getCalls().stream().map(c -> c.getOperation()).toList(),
                        expected.getCalls().stream().map(c -> c.getCalls()).toList()),
                callsByOperation(actual.getCalls().getItem().stream().map(c -> c.getOperation()).toList(),
                        actual.getCalls().getItem().stream().map(c -> c.getCalls()).toList()));
    }

    @Test
    void fitOfAGuessTheModelCannotTakeIsTheDeclaredFault() {
        FitFault_Exception e = assertThrows(FitFault_Exception.class,
                () -> optimizer.fit(list(1, 2), list(INITIAL), list(TIMES), list(new double[TIMES.length * 4]), null, null));
        assertTrue(e.getFaultInfo().getReason().contains("the guess has 2 parameters"), e.getFaultInfo().getReason());
    }
}
