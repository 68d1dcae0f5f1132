package io.switchboard.components.matrix;

import java.util.Random;

/** Test matrices, and the comparisons the tests make against the local product. */
final class Matrices {
    private Matrices() {
    }

    /**
     * Integers from -9 to 9: every product and partial sum of a 500 × 500 multiplication is an
     * integer below 2^53, so it is exact in any order of summation and results compare with ==.
     */
    static Block integers(Random rnd, int rows, int cols) {
        double[] v = new double[rows * cols];
        for (int i = 0; i < v.length; i++) {
            v[i] = rnd.nextInt(19) - 9;
        }
        return Blocks.of(rows, cols, v);
    }

    /** Uniform in [-1, 1): products are rounded, so the order of summation shows in the last bits. */
    static Block doubles(Random rnd, int rows, int cols) {
        double[] v = new double[rows * cols];
        for (int i = 0; i < v.length; i++) {
            v[i] = 2 * rnd.nextDouble() - 1;
        }
        return Blocks.of(rows, cols, v);
    }

    /**
     * The largest |c - reference| over all elements, divided by the element's error bound. Both
     * are sums of n rounded products taken in different orders (Cannon adds block by block starting
     * at block i+j); each is within γ_n (|A||B|)_ij of the exact value, γ_n = n·u / (1 - n·u),
     * u = 2^-53 (Higham, Accuracy and Stability of Numerical Algorithms, §3.5). So the two differ by
     * at most 2 γ_n (|A||B|)_ij, and a result within that bound is as right as the reference is;
     * anything more (a wrong or missing block) is off by whole products, orders of magnitude more.
     */
    static double worstErrorRatio(Block a, Block b, Block c, Block reference) {
        int n = a.getCols();
        double u = Math.ulp(1.0) / 2;
        double gamma = n * u / (1 - n * u);
        Block absA = abs(a);
        Block absB = abs(b);
        Block bound = Blocks.multiply(absA, absB);
        double worst = 0;
        for (int i = 0; i < c.getValues().length; i++) {
            double diff = Math.abs(c.getValues()[i] - reference.getValues()[i]);
            double allowed = 2 * gamma * bound.getValues()[i];
            worst = Math.max(worst, allowed == 0 ? (diff == 0 ? 0 : Double.POSITIVE_INFINITY) : diff / allowed);
        }
        return worst;
    }

    private static Block abs(Block m) {
        double[] v = m.getValues().clone();
        for (int i = 0; i < v.length; i++) {
            v[i] = Math.abs(v[i]);
        }
        return Blocks.of(m.getRows(), m.getCols(), v);
    }
}
