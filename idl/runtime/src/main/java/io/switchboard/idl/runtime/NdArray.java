package io.switchboard.idl.runtime;

/**
 * A multi-dimensional array of numbers as it travels: a {@code shape} (one length per dimension)
 * and the values in row-major order, packed in one primitive array. The interface compiler makes
 * the bean of every {@code <sb:ndarray/>} schema type implement it, and adds typed helpers.
 *
 * <pre>{@code
 * Matrix m = Matrix.of(new double[][] {{1, 2, 3}, {4, 5, 6}});   // shape [2, 3], values 1..6
 * double x = m.get(1, 2);                                        // 6.0
 * double[][] rows = m.toArray();
 * }</pre>
 */
public interface NdArray {
    /** The length of each dimension, outermost first; never null in a consistent array. */
    int[] getShape();

    /** The values, row-major, as their primitive array ({@code double[]}, {@code int[]}, ...). */
    Object ndValues();
}
