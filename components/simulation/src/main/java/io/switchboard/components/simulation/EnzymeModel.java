package io.switchboard.components.simulation;

import java.util.Arrays;
import java.util.List;
import org.apache.commons.math3.exception.MathIllegalStateException;
import org.apache.commons.math3.ode.FirstOrderDifferentialEquations;
import org.apache.commons.math3.ode.FirstOrderIntegrator;
import org.apache.commons.math3.ode.nonstiff.DormandPrince853Integrator;
import org.apache.commons.math3.ode.sampling.StepHandler;
import org.apache.commons.math3.ode.sampling.StepInterpolator;

/**
 * The kinetic model the simulator runs: an open enzyme reaction with mass-action kinetics,
 * {@code 0 -v0-> S}, {@code E + S <-k1/km1-> ES -k2-> E + P}, {@code P -kdeg-> 0}; species
 * (S, E, ES, P), parameters (v0, k1, km1, k2, kdeg). Integrated with Commons Math's
 * Dormand-Prince 8(5,3) at tight tolerances, so that an optimizer's finite differences see the
 * model and not the integrator's error.
 *
 * <p>Its steady state is known in closed form (for v0 below k2 times the total enzyme): ES = v0/k2,
 * P = v0/kdeg, E = E_T - ES, S = (km1 + k2) ES / (k1 E); the tests hold the integrator to it.
 *
 * <pre>{@code
 * double[] course = EnzymeModel.simulate(new double[] {0.5, 2, 1, 1.5, 0.3}, new double[] {2, 1, 0, 0},
 *         new double[] {0.5, 1, 1.5});   // 3 times x 4 species, row-major
 * }</pre>
 */
public final class EnzymeModel implements FirstOrderDifferentialEquations {
    public static final List<String> SPECIES = List.of("S", "E", "ES", "P");
    public static final List<String> PARAMETERS = List.of("v0", "k1", "km1", "k2", "kdeg");
    /** Most time points one simulation answers (4 doubles each). */
    public static final int MAX_TIMES = 1_000_000;
    static final double REL_TOL = 1e-10;
    static final double ABS_TOL = 1e-12;

    private final double v0;
    private final double k1;
    private final double km1;
    private final double k2;
    private final double kdeg;

    public EnzymeModel(double[] parameters) {
        checkParameters(parameters);
        v0 = parameters[0];
        k1 = parameters[1];
        km1 = parameters[2];
        k2 = parameters[3];
        kdeg = parameters[4];
    }

    @Override
    public int getDimension() {
        return 4;
    }

    @Override
    public void computeDerivatives(double t, double[] y, double[] dy) {
        double s = y[0];
        double e = y[1];
        double es = y[2];
        double p = y[3];
        double bind = k1 * e * s - km1 * es;
        double make = k2 * es;
        dy[0] = v0 - bind;
        dy[1] = -bind + make;
        dy[2] = bind - make;
        dy[3] = make - kdeg * p;
    }

    /** The state at each of {@code times} (ascending, from 0), row-major: {@code [t * 4 + species]}. */
    public static double[] simulate(double[] parameters, double[] initial, double[] times) {
        return simulate(parameters, initial, times, (done, course) -> { });
    }

    /** Told how many time points of the course are filled in, as the integration advances. */
    @FunctionalInterface
    public interface Observer {
        /** {@code course} holds the first {@code done} time points; may throw to stop the simulation. */
        void filled(int done, double[] course);
    }

    /** As {@link #simulate(double[], double[], double[])}, telling {@code observer} after each step that filled time points. */
    public static double[] simulate(double[] parameters, double[] initial, double[] times, Observer observer) {
        EnzymeModel model = new EnzymeModel(parameters);
        checkInitial(initial);
        checkTimes(times);
        double[] out = new double[times.length * 4];
        int first = 0;
        while (first < times.length && times[first] == 0) {
            System.arraycopy(initial, 0, out, first * 4, 4);
            first++;
        }
        if (first > 0) {
            observer.filled(first, out);
        }
        if (first == times.length) {
            return out;
        }
        // one integration over the whole span; the step handler reads each time point off the
        // integrator's dense output (7th order), instead of restarting the integrator per point
        FirstOrderIntegrator integrator = integrator();
        int[] next = {first};
        integrator.addStepHandler(new StepHandler() {
            @Override
            public void init(double t0, double[] y0, double t) {
            }

            @Override
            public void handleStep(StepInterpolator interpolator, boolean isLast) {
                int before = next[0];
                while (next[0] < times.length && (times[next[0]] <= interpolator.getCurrentTime() || isLast)) {
                    interpolator.setInterpolatedTime(times[next[0]]);
                    System.arraycopy(interpolator.getInterpolatedState(), 0, out, next[0] * 4, 4);
                    next[0]++;
                }
                if (next[0] > before) {
                    observer.filled(next[0], out);
                }
            }
        });
        integrator.integrate(model, 0, initial.clone(), times[times.length - 1], new double[4]);
        return out;
    }

    /**
     * Integrates from {@code initial} over ever longer spans until the rates of change are
     * negligible (|dy/dt| ≤ 1e-11 (1 + |y|) in every species); the state there.
     *
     * @throws IllegalStateException if none is reached by t = 1e7 (no steady state: v0 ≥ k2 E_T
     *                               makes S grow without bound)
     */
    public static double[] steadyState(double[] parameters, double[] initial) {
        EnzymeModel model = new EnzymeModel(parameters);
        checkInitial(initial);
        if (analyticSteadyState(parameters, initial) == null) {
            // S would grow without bound, and the integrator would grind through an ever stiffer
            // system before giving up: say so at once
            throw new IllegalStateException("no steady state: the inflow v0 = " + parameters[0] + " is not below k2 "
                    + "times the total enzyme, " + parameters[3] * (initial[1] + initial[2]));
        }
        double[] y = initial.clone();
        double[] dy = new double[4];
        double t = 0;
        for (double span = 10; t < 1e7; span *= 2) {
            integrator().integrate(model, t, y, t + span, y);
            t += span;
            model.computeDerivatives(t, y, dy);
            boolean still = true;
            for (int i = 0; i < 4; i++) {
                still &= Math.abs(dy[i]) <= 1e-11 * (1 + Math.abs(y[i]));
            }
            if (still) {
                return y;
            }
        }
        throw new IllegalStateException("no steady state by t = 1e7 (state " + Arrays.toString(y)
                + "); v0 must be below k2 times the total enzyme");
    }

    /** The steady state in closed form, for checking; null if there is none. */
    public static double[] analyticSteadyState(double[] parameters, double[] initial) {
        double v0 = parameters[0];
        double k1 = parameters[1];
        double km1 = parameters[2];
        double k2 = parameters[3];
        double kdeg = parameters[4];
        double total = initial[1] + initial[2];
        double es = v0 / k2;
        if (es >= total) {
            return null;
        }
        double e = total - es;
        return new double[] {(km1 + k2) * es / (k1 * e), e, es, v0 / kdeg};
    }

    private static FirstOrderIntegrator integrator() {
        DormandPrince853Integrator i = new DormandPrince853Integrator(1e-12, 1e4, ABS_TOL, REL_TOL);
        i.setMaxEvaluations(500_000);   // a bound, so a stiff corner of parameter space fails instead of hanging
        return i;
    }

    static void checkParameters(double[] p) {
        if (p == null || p.length != PARAMETERS.size()) {
            throw new IllegalArgumentException("the model takes " + PARAMETERS.size() + " parameters " + PARAMETERS
                    + ", not " + (p == null ? "none" : p.length));
        }
        for (int i = 0; i < p.length; i++) {
            if (!(p[i] >= 0) || Double.isInfinite(p[i])) {
                throw new IllegalArgumentException("parameter " + PARAMETERS.get(i) + " must be finite and not negative: "
                        + p[i]);
            }
        }
    }

    static void checkInitial(double[] y) {
        if (y == null || y.length != SPECIES.size()) {
            throw new IllegalArgumentException("the initial state has " + SPECIES.size() + " species " + SPECIES
                    + ", not " + (y == null ? "none" : y.length));
        }
        for (int i = 0; i < y.length; i++) {
            if (!(y[i] >= 0) || Double.isInfinite(y[i])) {
                throw new IllegalArgumentException("initial " + SPECIES.get(i) + " must be finite and not negative: "
                        + y[i]);
            }
        }
    }

    static void checkTimes(double[] times) {
        if (times == null || times.length == 0) {
            throw new IllegalArgumentException("no times to report the state at");
        }
        if (times.length > MAX_TIMES) {
            throw new IllegalArgumentException(times.length + " times is more than the limit of " + MAX_TIMES);
        }
        double last = 0;
        for (int i = 0; i < times.length; i++) {
            if (!(times[i] >= last) || Double.isInfinite(times[i])) {
                throw new IllegalArgumentException("times must be finite, ascending and from 0: times[" + i + "] = "
                        + times[i]);
            }
            last = times[i];
        }
    }

    /** Commons Math's integrator gave up (too many steps). */
    static boolean isIntegratorFailure(RuntimeException e) {
        return e instanceof MathIllegalStateException;
    }
}
