package io.switchboard.components.simulation;

import io.switchboard.components.simulation.progress.Progress;
import io.switchboard.components.simulation.progress.ProgressComponent;
import io.switchboard.metastub.MetaStub;
import io.switchboard.client.Switchboard;
import io.switchboard.server.ComponentContext;
import java.util.Arrays;
import java.util.concurrent.atomic.AtomicLong;

/**
 * The simulator component: runs {@link EnzymeModel} for whoever calls. Stateless, so any number
 * of optimizers may share one; bad input is a declared fault that says what is wrong. Made with
 * the registry's URL, it also reports the progress of a time course to a callback the caller
 * names ({@code simulateWithProgress}), found in that registry.
 *
 * <pre>{@code
 * server.export(SimulatorComponent.skeleton(new SimulatorService(registryUrl)));   // bound as "Simulator"
 *
 * // a caller, with its own Switchboard sb:
 * try (ExportedCallback progress = ExportedCallback.export(sb, ProgressComponent.skeleton(
 *         (done, total, time, state) -> System.out.printf("%d of %d at t=%.1f%n", done, total, time)))) {
 *     double[] course = simulator.simulateWithProgress(parameters, initial, times, progress.name(), 10);
 * }
 * }</pre>
 */
public final class SimulatorService implements Simulator, AutoCloseable {
    /** The most progress reports one call may ask for. */
    public static final int MAX_REPORTS = 10_000;

    private final AtomicLong simulations = new AtomicLong();
    private final String registryUrl;
    private Switchboard callbacks;

    /** A simulator that cannot call back: {@code simulateWithProgress} is refused with its fault. */
    public SimulatorService() {
        this((String) null);
    }

    /** A simulator that finds progress callbacks in the registry at {@code registryUrl}. */
    public SimulatorService(String registryUrl) {
        this.registryUrl = registryUrl;
    }

    /** A simulator served from the class path: progress callbacks are found in the context's registry. */
    public SimulatorService(ComponentContext context) {
        this(context.registryUrl());
    }

    @Override
    public double[] simulateWithProgress(double[] parameters, double[] initial, double[] times, String progress,
                                         int reports) throws SimulateWithProgressFaultException {
        if (registryUrl == null) {
            throw progressFault("this simulator was started without a registry, so it cannot call back " + progress);
        }
        if (reports < 1 || reports > MAX_REPORTS) {
            throw progressFault("reports must be 1 to " + MAX_REPORTS + ", not " + reports);
        }
        MetaStub channel;
        try {
            channel = callbacks().callbackChannel(progress, ProgressComponent.DESCRIPTOR);
        } catch (Switchboard.NotBoundException e) {
            throw progressFault("no progress callback is bound under '" + progress + "'");
        }
        try (channel) {
            Progress callback = ProgressComponent.stub(channel);
            int[] reported = {0};
            double[] course = EnzymeModel.simulate(parameters, initial, times, (done, out) -> {
                // reports fall due evenly over the time points; the last one when all are done
                int due = (int) ((long) done * reports / times.length);
                if (due > reported[0]) {
                    reported[0] = due;
                    int last = done - 1;
                    try {
                        callback.report(done, times.length, times[last], Arrays.copyOfRange(out, last * 4, last * 4 + 4));
                    } catch (RuntimeException e) {
                        throw new CallbackFailed(e);
                    }
                }
            });
            simulations.incrementAndGet();
            return course;
        } catch (CallbackFailed e) {
            throw progressFault("the progress callback '" + progress + "' failed: " + e.getCause().getMessage());
        } catch (IllegalArgumentException e) {
            throw progressFault(e.getMessage());
        } catch (RuntimeException e) {
            if (EnzymeModel.isIntegratorFailure(e)) {
                throw progressFault("the integrator gave up: " + e.getMessage());
            }
            throw e;
        }
    }

    private synchronized Switchboard callbacks() {
        if (callbacks == null) {
            callbacks = Switchboard.builder(registryUrl).follow(false).connect();
        }
        return callbacks;
    }

    /** Closes the registry connection callbacks were found through, if one was opened. */
    @Override
    public synchronized void close() {
        if (callbacks != null) {
            callbacks.close();
            callbacks = null;
        }
    }

    /** A report that failed, carried out of the integrator's step handler. */
    private static final class CallbackFailed extends RuntimeException {
        CallbackFailed(RuntimeException cause) {
            super(cause);
        }
    }

    private static SimulateWithProgressFaultException progressFault(String reason) {
        SimulateWithProgressFault f = new SimulateWithProgressFault();
        f.setReason(reason);
        return new SimulateWithProgressFaultException(f);
    }

    @Override
    public double[] simulate(double[] parameters, double[] initial, double[] times) throws SimulateFaultException {
        try {
            double[] course = EnzymeModel.simulate(parameters, initial, times);
            simulations.incrementAndGet();
            return course;
        } catch (IllegalArgumentException e) {
            throw simulateFault(e.getMessage());
        } catch (RuntimeException e) {
            if (EnzymeModel.isIntegratorFailure(e)) {
                throw simulateFault("the integrator gave up: " + e.getMessage());
            }
            throw e;
        }
    }

    @Override
    public double[] steadyState(double[] parameters, double[] initial) throws SteadyStateFaultException {
        try {
            return EnzymeModel.steadyState(parameters, initial);
        } catch (IllegalArgumentException | IllegalStateException e) {
            throw steadyStateFault(e.getMessage());
        } catch (RuntimeException e) {
            if (EnzymeModel.isIntegratorFailure(e)) {
                throw steadyStateFault("the integrator gave up: " + e.getMessage());
            }
            throw e;
        }
    }

    @Override
    public ModelInfo describe() {
        ModelInfo info = new ModelInfo();
        info.setName("open enzyme reaction: 0 -v0-> S, E + S <-k1/km1-> ES -k2-> E + P, P -kdeg-> 0");
        info.setSpecies(EnzymeModel.SPECIES);
        info.setParameters(EnzymeModel.PARAMETERS);
        return info;
    }

    /** Time courses computed so far. */
    public long simulations() {
        return simulations.get();
    }

    private static SimulateFaultException simulateFault(String reason) {
        SimulateFault f = new SimulateFault();
        f.setReason(reason);
        return new SimulateFaultException(f);
    }

    private static SteadyStateFaultException steadyStateFault(String reason) {
        SteadyStateFault f = new SteadyStateFault();
        f.setReason(reason);
        return new SteadyStateFaultException(f);
    }
}
