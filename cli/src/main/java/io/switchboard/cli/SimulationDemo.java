package io.switchboard.cli;

import io.switchboard.components.simulation.EnzymeModel;
import io.switchboard.components.simulation.SimulatorComponent;
import io.switchboard.components.simulation.SimulatorService;
import io.switchboard.components.simulation.SimulatorStub;
import io.switchboard.components.simulation.optimizer.FitResult;
import io.switchboard.components.simulation.optimizer.OptimizerComponent;
import io.switchboard.components.simulation.optimizer.OptimizerService;
import io.switchboard.components.simulation.optimizer.OptimizerStub;
import io.switchboard.components.simulation.optimizer.ProtocolCount;
import io.switchboard.components.simulation.progress.ProgressComponent;
import io.switchboard.metastub.CallRecord;
import io.switchboard.metastub.Policies;
import io.switchboard.metastub.SizePolicy;
import io.switchboard.server.ComponentServer;
import io.switchboard.server.ExportedCallback;
import io.switchboard.client.Switchboard;
import java.io.PrintStream;
import java.time.Duration;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.CopyOnWriteArrayList;

/**
 * The demo's simulation stage (the Systems Biology Workbench scenario): a simulator and an
 * optimizer, each exported by a component server of its own and bound in the registry; the client
 * makes data with known parameters through the simulator and asks the optimizer to fit them from
 * a guess 40-80% off; the optimizer finds the simulator in the registry and calls it itself. Then
 * one long simulation reports its progress to a callback the client exports on the fly.
 */
final class SimulationDemo {
    private static final double[] TRUE = {0.5, 2.0, 1.0, 1.5, 0.3};
    private static final double[] INITIAL = {2, 1, 0, 0};
    private static final double[] GUESS = {0.5 * 1.6, 2.0 * 0.6, 1.0 * 1.8, 1.5 * 0.7, 0.3 * 1.4};
    /** Noise-free data: the fit comes back to about 1e-7 relative (SimulationOverRegistryTest); 1e-4 leaves room. */
    private static final double TOLERANCE = 1e-4;
    /** The size policy, so that the split is by payload: parameters and steady states on SOAP, time courses on gRPC. */
    private static final String POLICY = "size";

    private final PrintStream out;

    SimulationDemo(PrintStream out) {
        this.out = out;
    }

    DemoStageResult run(String registryUrl, String secret) {
        out.println("== simulation: a simulator and an optimizer, each a component server bound in the registry ==");
        // in this JVM, unlike the matrix workers: a second and third JVM would add seconds of start-up on a
        // busy machine and show nothing new; the servers offer only the network protocols, so every call
        // still goes over a loopback socket, as between processes
        out.println("           (both served from this JVM; every call still goes over a loopback socket)");
        List<CallRecord> records = new CopyOnWriteArrayList<>();
        try (SimulatorService simulator = new SimulatorService(registryUrl);
             // the demo's own clients are done when these close: no quiet period to wait out
             ComponentServer simulatorServer = ComponentServer.builder().registry(registryUrl, secret)
                     .protocols(DemoCommand.networkProtocols())
                     .drain(Duration.ZERO, ComponentServer.DEFAULT_DRAIN_TIMEOUT).build();
             ComponentServer optimizerServer = ComponentServer.builder().registry(registryUrl, secret)
                     .protocols(DemoCommand.networkProtocols())
                     .drain(Duration.ZERO, ComponentServer.DEFAULT_DRAIN_TIMEOUT).build();
             Switchboard sb = Switchboard.builder(registryUrl).secret(secret).policy(Policies.byName(POLICY))
                     .listener(records::add).connect()) {
            simulatorServer.export(SimulatorComponent.skeleton(simulator));
            optimizerServer.export(OptimizerComponent.skeleton(new OptimizerService(registryUrl)));
            out.println("policy     " + POLICY + ": small calls (parameters, steady states) on SOAP, large ones (time courses) "
                    + "on gRPC (threshold " + SizePolicy.DEFAULT_THRESHOLD + " bytes)");
            SimulatorStub sim = sb.lookup(SimulatorComponent.DESCRIPTOR, SimulatorComponent::stub);
            OptimizerStub optimizer = sb.lookup(OptimizerComponent.DESCRIPTOR, OptimizerComponent::stub);
            double[] times = times(200, 0.1);
            boolean described = EnzymeModel.PARAMETERS.equals(sim.describe().getParameters());
            double[] observed = sim.simulate(TRUE, INITIAL, times);
            out.println("data       " + times.length + " time points x 4 species simulated with the true parameters");

            long start = System.nanoTime();
            FitResult fit = optimizer.fit(GUESS, INITIAL, times, observed, "Simulator", POLICY);
            long millis = (System.nanoTime() - start) / 1_000_000;
            double worst = 0;
            out.printf("fit        %d ms, %d iterations, %d simulations, cost %.2e%n", millis, fit.getIterations(),
                    fit.getEvaluations(), fit.getCost());
            out.printf("           %-6s %-12s %-12s %-12s%n", "", "true", "guess", "fitted");
            for (int j = 0; j < TRUE.length; j++) {
                worst = Math.max(worst, Math.abs(fit.getParameters()[j] / TRUE[j] - 1));
                out.printf("           %-6s %-12.6g %-12.6g %-12.8g%n", EnzymeModel.PARAMETERS.get(j), TRUE[j], GUESS[j],
                        fit.getParameters()[j]);
            }
            boolean recovered = worst < TOLERANCE;
            out.printf("           worst relative error %.1e: %s (tolerance %.0e)%n", worst,
                    recovered ? "recovered" : "NOT recovered", TOLERANCE);
            Map<String, Long> optimizerCalls = new TreeMap<>();
            for (ProtocolCount pc : fit.getCalls()) {
                optimizerCalls.merge(pc.getOperation() + " " + pc.getProtocol(), pc.getCalls(), Long::sum);
            }
            out.println("  the optimizer's own calls to the simulator, as it reports them: " + optimizerCalls);

            boolean progressed = progress(sb, sim);
            out.println("  the client's calls:");
            CallBreakdown.print(out, "    ", records);
            out.println();
            return DemoStageResult.of("simulation", records, described && recovered && progressed,
                    fit.getEvaluations() + " simulations by the optimizer");
        } catch (Exception e) {
            out.println("simulation stage FAILED: " + e);
            out.println();
            return DemoStageResult.of("simulation", records, false, "failed: " + e.getClass().getSimpleName());
        }
    }

    /** One long simulation reporting to a callback exported here; true if the reports and the answer are right. */
    private boolean progress(Switchboard sb, SimulatorStub sim) throws Exception {
        double[] times = times(2000, 0.05);
        List<Integer> done = new CopyOnWriteArrayList<>();
        try (ExportedCallback callback = ExportedCallback.export(sb, ProgressComponent.skeleton((d, total, time, state) -> {
            done.add(d);
            out.printf("    progress %4d/%d  t = %6.1f  S, E, ES, P = %s%n", d, total, time, Arrays.toString(round(state)));
        }))) {
            out.println("callback   exported as " + callback.name() + "; a " + times.length
                    + "-point simulation reports to it while it runs:");
            double[] course = sim.simulateWithProgress(TRUE, INITIAL, times, callback.name(), 5);
            boolean same = Arrays.equals(course, EnzymeModel.simulate(TRUE, INITIAL, times));
            boolean complete = !done.isEmpty() && done.get(done.size() - 1) == times.length;
            out.println("           the time course equals the local simulation: " + same + "; " + done.size()
                    + " reports, the last one says all " + times.length + " points are done: " + complete);
            return same && complete;
        }
    }

    private static double[] round(double[] state) {
        double[] r = new double[state.length];
        for (int i = 0; i < state.length; i++) {
            r[i] = Math.round(state[i] * 1e4) / 1e4;
        }
        return r;
    }

    private static double[] times(int n, double step) {
        double[] t = new double[n];
        for (int i = 0; i < n; i++) {
            t[i] = step * (i + 1);
        }
        return t;
    }
}
