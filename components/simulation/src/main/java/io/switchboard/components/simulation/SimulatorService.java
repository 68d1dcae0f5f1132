package io.switchboard.components.simulation;

import java.util.concurrent.atomic.AtomicLong;

/**
 * The simulator component: runs {@link EnzymeModel} for whoever calls. Stateless, so any number
 * of optimizers may share one; bad input is a declared fault that says what is wrong.
 *
 * <pre>{@code
 * server.export(SimulatorComponent.skeleton(new SimulatorService()));   // bound as "Simulator"
 * }</pre>
 */
public final class SimulatorService implements Simulator {
    private final AtomicLong simulations = new AtomicLong();

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
