package io.switchboard.components.simulation.optimizer;

import io.switchboard.components.simulation.EnzymeModel;
import io.switchboard.components.simulation.SimulateFaultException;
import io.switchboard.components.simulation.SimulatorComponent;
import io.switchboard.components.simulation.SimulatorStub;
import io.switchboard.components.simulation.SteadyStateFaultException;
import io.switchboard.metastub.CallRecord;
import io.switchboard.metastub.Policies;
import io.switchboard.client.Switchboard;
import io.switchboard.server.ComponentContext;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.LongAdder;
import org.apache.commons.math3.exception.ConvergenceException;
import org.apache.commons.math3.exception.TooManyEvaluationsException;
import org.apache.commons.math3.exception.TooManyIterationsException;
import org.apache.commons.math3.fitting.leastsquares.LeastSquaresBuilder;
import org.apache.commons.math3.fitting.leastsquares.LeastSquaresOptimizer;
import org.apache.commons.math3.fitting.leastsquares.LeastSquaresProblem;
import org.apache.commons.math3.fitting.leastsquares.LevenbergMarquardtOptimizer;
import org.apache.commons.math3.fitting.leastsquares.MultivariateJacobianFunction;
import org.apache.commons.math3.linear.Array2DRowRealMatrix;
import org.apache.commons.math3.linear.ArrayRealVector;
import org.apache.commons.math3.linear.RealVector;
import org.apache.commons.math3.util.Pair;

/**
 * The optimizer component: fits the simulator's parameters to an observed time course. It finds
 * the simulator in the registry and calls it once per evaluation of the model: Commons Math's
 * Levenberg-Marquardt works on the logarithms of the parameters (so they stay positive and a step
 * is relative), with the Jacobian by forward differences, one simulation per parameter. Each
 * species' residuals are divided by the largest value observed for it, so that a species of small
 * amounts counts as much as one of large amounts.
 *
 * <p>Each fit opens its own switchboard (a registry lookup and fresh connections; a fit is
 * hundreds of calls, so this is small) and reports the protocol of every call it made.
 *
 * <pre>{@code
 * server.export(OptimizerComponent.skeleton(new OptimizerService(registryUrl)));
 * FitResult r = optimizer.fit(guess, initial, times, observed, null, null);   // simulator "Simulator", adaptive
 * }</pre>
 */
public final class OptimizerService implements Optimizer {
    /** Forward-difference step on log(parameter): about the square root of the simulation's relative error. */
    static final double LOG_STEP = 1e-5;
    static final int MAX_EVALUATIONS = 2_000;

    private final String registryUrl;

    public OptimizerService(String registryUrl) {
        this.registryUrl = registryUrl;
    }

    /** An optimizer served from the class path: it finds the simulator in the context's registry. */
    public OptimizerService(ComponentContext context) {
        this(context.registryUrl());
    }

    @Override
    public FitResult fit(double[] guess, double[] initial, double[] times, double[] observed, String simulator,
                         String policy) throws FitFaultException {
        int n = EnzymeModel.PARAMETERS.size();
        if (guess == null || guess.length != n) {
            throw fault("the guess has " + (guess == null ? "no" : guess.length) + " parameters; the model takes " + n
                    + " " + EnzymeModel.PARAMETERS);
        }
        for (double g : guess) {
            if (!(g > 0) || Double.isInfinite(g)) {
                throw fault("every parameter of the guess must be positive and finite (the fit works on logarithms)");
            }
        }
        int species = EnzymeModel.SPECIES.size();
        if (times == null || observed == null || observed.length != times.length * species) {
            throw fault("observed must hold " + species + " values per time point: " + (times == null ? 0 : times.length)
                    + " times, " + (observed == null ? 0 : observed.length) + " values");
        }
        double[] scale = new double[species];
        for (int i = 0; i < observed.length; i++) {
            scale[i % species] = Math.max(scale[i % species], Math.abs(observed[i]));
        }
        for (int s = 0; s < species; s++) {
            scale[s] = scale[s] > 0 ? scale[s] : 1;
        }
        Tally tally = new Tally();
        AtomicInteger simulations = new AtomicInteger();
        Switchboard.Builder b = Switchboard.builder(registryUrl).listener(tally::onCall);
        if (policy != null) {
            b.policy(Policies.byName(policy));
        }
        try (Switchboard sb = b.connect()) {
            SimulatorStub sim = sb.lookup(simulator == null ? "Simulator" : simulator, SimulatorComponent.DESCRIPTOR,
                    SimulatorComponent::stub);
            MultivariateJacobianFunction model = point -> {
                double[] logp = point.toArray();
                double[] r = residuals(sim, exp(logp), initial, times, observed, scale, simulations);
                double[][] jac = new double[r.length][n];
                for (int j = 0; j < n; j++) {
                    double[] shifted = logp.clone();
                    shifted[j] += LOG_STEP;
                    double[] rj = residuals(sim, exp(shifted), initial, times, observed, scale, simulations);
                    for (int i = 0; i < r.length; i++) {
                        jac[i][j] = (rj[i] - r[i]) / LOG_STEP;
                    }
                }
                return new Pair<>(new ArrayRealVector(r, false), new Array2DRowRealMatrix(jac, false));
            };
            double[] start = new double[n];
            for (int j = 0; j < n; j++) {
                start[j] = Math.log(guess[j]);
            }
            LeastSquaresProblem problem = new LeastSquaresBuilder().start(start).model(model)
                    .target(new double[observed.length]).maxEvaluations(MAX_EVALUATIONS).maxIterations(MAX_EVALUATIONS)
                    .build();
            LeastSquaresOptimizer.Optimum optimum;
            try {
                optimum = new LevenbergMarquardtOptimizer().withCostRelativeTolerance(1e-14)
                        .withParameterRelativeTolerance(1e-12).withOrthoTolerance(1e-14).optimize(problem);
            } catch (TooManyEvaluationsException | TooManyIterationsException | ConvergenceException e) {
                throw fault("the fit did not converge: " + e.getMessage());
            } catch (SimulationFailed e) {
                throw fault("the simulator failed during the fit: " + e.getMessage());
            }
            double[] fitted = exp(optimum.getPoint().toArray());
            FitResult result = new FitResult();
            result.setParameters(fitted);
            double norm = optimum.getCost();   // Commons Math's cost is the residuals' norm
            result.setCost(norm * norm);
            result.setIterations(optimum.getIterations());
            result.setEvaluations(simulations.get());
            try {
                result.setSteadyState(sim.steadyState(fitted, initial));
            } catch (SteadyStateFaultException e) {
                result.setSteadyState(null);   // a fit may land where there is none; the fit still stands
            }
            result.setCalls(tally.counts());
            return result;
        }
    }

    private static double[] residuals(SimulatorStub sim, double[] p, double[] initial, double[] times, double[] observed,
                                      double[] scale, AtomicInteger simulations) {
        double[] course;
        try {
            course = sim.simulate(p, initial, times);
        } catch (SimulateFaultException e) {
            throw new SimulationFailed(e.getFaultInfo().getReason());
        }
        simulations.incrementAndGet();
        int species = scale.length;
        double[] r = new double[observed.length];
        for (int i = 0; i < r.length; i++) {
            r[i] = (course[i] - observed[i]) / scale[i % species];
        }
        return r;
    }

    private static double[] exp(double[] logs) {
        double[] p = new double[logs.length];
        for (int i = 0; i < p.length; i++) {
            p[i] = Math.exp(logs[i]);
        }
        return p;
    }

    private static FitFaultException fault(String reason) {
        FitFault f = new FitFault();
        f.setReason(reason);
        return new FitFaultException(f);
    }

    /** A declared fault of the simulator, carried out of Commons Math's callback. */
    private static final class SimulationFailed extends RuntimeException {
        SimulationFailed(String message) {
            super(message);
        }
    }

    /** Calls by operation and protocol, as {@code FitResult.calls} reports them. */
    private static final class Tally {
        private final Map<String, LongAdder> counts = new ConcurrentHashMap<>();

        void onCall(CallRecord r) {
            counts.computeIfAbsent(r.operation() + " " + r.protocol(), k -> new LongAdder()).increment();
        }

        List<ProtocolCount> counts() {
            List<ProtocolCount> out = new ArrayList<>();
            new TreeMap<>(counts).forEach((key, n) -> {
                ProtocolCount pc = new ProtocolCount();
                pc.setOperation(key.substring(0, key.indexOf(' ')));
                pc.setProtocol(key.substring(key.indexOf(' ') + 1));
                pc.setCalls(n.sum());
                out.add(pc);
            });
            return out;
        }
    }
}
