package io.switchboard.components.simulation;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import org.junit.jupiter.api.Test;

/** The model on its own: conservation, the closed-form steady state, refusals. */
class EnzymeModelTest {
    static final double[] TRUE = {0.5, 2.0, 1.0, 1.5, 0.3};
    static final double[] INITIAL = {2, 1, 0, 0};

    @Test
    void enzymeIsConservedAlongTheTimeCourse() {
        double[] times = new double[100];
        for (int i = 0; i < times.length; i++) {
            times[i] = i * 0.25;
        }
        double[] course = EnzymeModel.simulate(TRUE, INITIAL, times);
        assertArrayEquals(INITIAL, java.util.Arrays.copyOf(course, 4), "time 0 is the initial state");
        for (int t = 0; t < times.length; t++) {
            assertEquals(1.0, course[t * 4 + 1] + course[t * 4 + 2], 1e-9, "E + ES at t=" + times[t]);
        }
    }

    @Test
    void integratedSteadyStateMatchesTheClosedForm() {
        double[] numeric = EnzymeModel.steadyState(TRUE, INITIAL);
        double[] exact = EnzymeModel.analyticSteadyState(TRUE, INITIAL);
        for (int i = 0; i < 4; i++) {
            assertEquals(exact[i], numeric[i], 1e-8 * Math.max(1, exact[i]), EnzymeModel.SPECIES.get(i));
        }
    }

    @Test
    void noSteadyStateAndBadInputAreRefused() {
        // inflow faster than the enzyme can convert: S grows without bound
        IllegalStateException none = assertThrows(IllegalStateException.class,
                () -> EnzymeModel.steadyState(new double[] {2, 2, 1, 1.5, 0.3}, INITIAL));
        assertTrue(none.getMessage().startsWith("no steady state"), none.getMessage());
        assertThrows(IllegalArgumentException.class, () -> EnzymeModel.simulate(new double[4], INITIAL, new double[] {1}));
        assertThrows(IllegalArgumentException.class, () -> EnzymeModel.simulate(TRUE, INITIAL, new double[] {2, 1}));
        assertThrows(IllegalArgumentException.class,
                () -> EnzymeModel.simulate(TRUE, new double[] {Double.NaN, 1, 0, 0}, new double[] {1}));
    }
}
