package io.switchboard.codec;

import io.switchboard.idl.runtime.NdArray;
import java.lang.reflect.Array;
import java.util.Arrays;

/**
 * Conversions between Java's nested arrays ({@code double[][]}, {@code int[][][]}, ...) and the
 * packed form of an {@link NdArray} (shape and row-major values), and the consistency check every
 * encoder runs. Generated n-d array beans call these; nothing here is specific to one component.
 *
 * <pre>{@code
 * int[] shape = NdArrays.shapeOf(new double[][] {{1, 2}, {3, 4}, {5, 6}});      // [3, 2]
 * double[] flat = (double[]) NdArrays.flatten(rows, shape);
 * double[][] back = (double[][]) NdArrays.reshape(shape, flat);
 * }</pre>
 */
public final class NdArrays {
    private NdArrays() {
    }

    /** The number of values a shape holds; an empty shape (a 0-d array) holds one. */
    public static long size(int[] shape) {
        long n = 1;
        for (int d : shape) {
            if (d < 0) {
                throw new IllegalArgumentException("negative dimension in shape " + Arrays.toString(shape));
            }
            n *= d;
            if (n > Integer.MAX_VALUE) {
                // the values must fit one Java array; keep counting only to refuse
                n = Integer.MAX_VALUE + 1L;
            }
        }
        return n;
    }

    /** Null when {@code array} is consistent, else what is wrong with it. */
    public static String inconsistency(NdArray array) {
        int[] shape = array.getShape();
        Object values = array.ndValues();
        if (shape == null) {
            return "its shape is missing";
        }
        if (values == null) {
            return "its values are missing";
        }
        for (int d : shape) {
            if (d < 0) {
                return "shape " + Arrays.toString(shape) + " has a negative dimension";
            }
        }
        long size = size(shape);
        int length = Array.getLength(values);
        if (size != length) {
            return "shape " + Arrays.toString(shape) + " needs " + (size > Integer.MAX_VALUE ? "over 2^31" : size)
                    + " values, it holds " + length;
        }
        return null;
    }

    /** Throws {@link IllegalArgumentException} unless {@code array} is consistent. */
    public static void requireConsistent(NdArray array, String what) {
        String problem = inconsistency(array);
        if (problem != null) {
            throw new IllegalArgumentException("n-d array " + what + ": " + problem);
        }
    }

    /**
     * The shape of a rectangular nested array whose innermost arrays have {@code leaf} as their
     * component type ({@code double.class}). A null sub-array or rows of different lengths
     * (a ragged array) are refused: the packed form has one length per dimension.
     */
    public static int[] shapeOf(Object nested, Class<?> leaf) {
        if (nested == null) {
            throw new IllegalArgumentException("the array is null");
        }
        int rank = 0;
        Class<?> c = nested.getClass();
        while (c.isArray()) {
            rank++;
            c = c.getComponentType();
        }
        if (c != leaf) {
            throw new IllegalArgumentException("expected an array of " + leaf + ", got " + nested.getClass().getSimpleName());
        }
        int[] shape = new int[rank];
        Object level = nested;
        for (int d = 0; d < rank; d++) {
            shape[d] = Array.getLength(level);
            if (shape[d] == 0) {
                break;   // the lengths below an empty dimension are unknown: they stay 0
            }
            if (d + 1 < rank) {
                level = Array.get(level, 0);
                if (level == null) {
                    throw new IllegalArgumentException("row " + index(new int[d + 1], d + 1) + " is null");
                }
            }
        }
        check(nested, shape, 0, new int[rank]);
        return shape;
    }

    /** Walks every sub-array; recursion depth is the rank, never the size. */
    private static void check(Object level, int[] shape, int d, int[] at) {
        if (level == null) {
            throw new IllegalArgumentException("row " + index(at, d) + " is null");
        }
        int length = Array.getLength(level);
        if (length != shape[d]) {
            throw new IllegalArgumentException("ragged array: row " + index(at, d) + " has " + length
                    + " entries, row " + index(new int[d], d) + " has " + shape[d]
                    + "; an n-d array needs every row of a dimension to have the same length");
        }
        if (d + 1 == shape.length) {
            return;
        }
        Object[] rows = (Object[]) level;
        for (int i = 0; i < rows.length; i++) {
            at[d] = i;
            check(rows[i], shape, d + 1, at);
        }
    }

    private static String index(int[] at, int depth) {
        StringBuilder s = new StringBuilder();
        for (int i = 0; i < depth; i++) {
            s.append('[').append(at[i]).append(']');
        }
        return s.length() == 0 ? "(the whole array)" : s.toString();
    }

    /** The values of a rectangular nested array of the given shape, row-major, in a new primitive array. */
    public static Object flatten(Object nested, int[] shape, Class<?> leaf) {
        Object flat = Array.newInstance(leaf, (int) size(shape));
        if (shape.length == 0) {
            return flat;
        }
        copy(nested, shape, 0, flat, new int[] {0}, true);
        return flat;
    }

    /** A new nested array of {@code shape} holding {@code values} (row-major). A 0-d shape is refused. */
    public static Object reshape(int[] shape, Object values) {
        if (shape.length == 0) {
            throw new IllegalArgumentException("a 0-d array (empty shape) has no nested-array form; read its value");
        }
        long size = size(shape);
        if (size != Array.getLength(values)) {
            throw new IllegalArgumentException("shape " + Arrays.toString(shape) + " needs " + size + " values, got "
                    + Array.getLength(values));
        }
        Object nested = Array.newInstance(values.getClass().getComponentType(), shape);
        if (size > 0) {
            copy(nested, shape, 0, values, new int[] {0}, false);
        }
        return nested;
    }

    /** Copies rows between the nested form and the flat one; one System.arraycopy per innermost row. */
    private static void copy(Object level, int[] shape, int d, Object flat, int[] offset, boolean toFlat) {
        if (d + 1 == shape.length) {
            if (toFlat) {
                System.arraycopy(level, 0, flat, offset[0], shape[d]);
            } else {
                System.arraycopy(flat, offset[0], level, 0, shape[d]);
            }
            offset[0] += shape[d];
            return;
        }
        for (Object row : (Object[]) level) {
            copy(row, shape, d + 1, flat, offset, toFlat);
        }
    }

    /** The row-major position of {@code index} in an array of {@code shape}, bounds checked. */
    public static int offset(int[] shape, int... index) {
        if (index.length != shape.length) {
            throw new IllegalArgumentException("a " + shape.length + "-d array takes " + shape.length
                    + " indices, got " + index.length);
        }
        int at = 0;
        for (int d = 0; d < shape.length; d++) {
            if (index[d] < 0 || index[d] >= shape[d]) {
                throw new IndexOutOfBoundsException("index " + Arrays.toString(index) + " outside shape "
                        + Arrays.toString(shape));
            }
            at = at * shape[d] + index[d];
        }
        return at;
    }
}
