package io.switchboard.components.matrix;

/**
 * Dense row-major blocks ({@link Block}: rows, cols, values) and the few operations the workers
 * and the manager need: multiply, cut out a sub-block, paste one back. Every worker and the local
 * reference use the same kernel, so a product computed in one piece comes out bit for bit the same
 * wherever it runs.
 *
 * <pre>{@code
 * Block a = Blocks.of(2, 2, new double[] {1, 2, 3, 4});
 * Block c = Blocks.multiply(a, Blocks.identity(2));   // equal to a
 * }</pre>
 */
public final class Blocks {
    private Blocks() {
    }

    public static Block of(int rows, int cols, double[] values) {
        Block b = new Block();
        b.setRows(rows);
        b.setCols(cols);
        b.setValues(values);
        check(b, "block");
        return b;
    }

    public static Block zeros(int rows, int cols) {
        return of(rows, cols, new double[Math.multiplyExact(rows, cols)]);
    }

    public static Block identity(int n) {
        Block b = zeros(n, n);
        for (int i = 0; i < n; i++) {
            b.getValues()[i * n + i] = 1;
        }
        return b;
    }

    /**
     * Throws {@link IllegalArgumentException} naming {@code what} unless the block is well formed.
     * A block of no values may come with null values (an empty array and an absent one are the
     * same matrix).
     */
    public static void check(Block b, String what) {
        if (b == null) {
            throw new IllegalArgumentException(what + " is missing");
        }
        if (b.getRows() < 0 || b.getCols() < 0) {
            throw new IllegalArgumentException(what + " has negative dimensions " + b.getRows() + "x" + b.getCols());
        }
        long size = (long) b.getRows() * b.getCols();
        int have = b.getValues() == null ? 0 : b.getValues().length;
        if (size != have) {
            throw new IllegalArgumentException(what + " is " + b.getRows() + "x" + b.getCols() + " but holds " + have
                    + " values");
        }
    }

    private static double[] values(Block b) {
        return b.getValues() == null ? new double[0] : b.getValues();
    }

    /** a × b. */
    public static Block multiply(Block a, Block b) {
        return multiplyAdd(null, a, b);
    }

    /**
     * c + a × b as a new block (c is left as it was; null stands for zeros). The loop runs i-k-j:
     * the inner loop walks a row of b and a row of the result, which the JIT vectorises, and the
     * sum for each element is taken in k order, the same everywhere.
     */
    public static Block multiplyAdd(Block c, Block a, Block b) {
        check(a, "a");
        check(b, "b");
        if (a.getCols() != b.getRows()) {
            throw new IllegalArgumentException("cannot multiply " + a.getRows() + "x" + a.getCols() + " by "
                    + b.getRows() + "x" + b.getCols());
        }
        int n = a.getRows();
        int m = b.getCols();
        int inner = a.getCols();
        double[] out;
        if (c == null) {
            out = new double[Math.multiplyExact(n, m)];
        } else {
            check(c, "c");
            if (c.getRows() != n || c.getCols() != m) {
                throw new IllegalArgumentException("cannot add a " + n + "x" + m + " product to a " + c.getRows()
                        + "x" + c.getCols() + " block");
            }
            out = values(c).clone();
        }
        double[] av = values(a);
        double[] bv = values(b);
        for (int i = 0; i < n; i++) {
            int row = i * m;
            for (int k = 0; k < inner; k++) {
                double aik = av[i * inner + k];
                int brow = k * m;
                for (int j = 0; j < m; j++) {
                    out[row + j] += aik * bv[brow + j];
                }
            }
        }
        return of(n, m, out);
    }

    /** The rows × cols block of {@code m} whose top-left corner is (r0, c0). */
    public static Block sub(Block m, int r0, int rows, int c0, int cols) {
        if (r0 < 0 || c0 < 0 || rows < 0 || cols < 0 || r0 + rows > m.getRows() || c0 + cols > m.getCols()) {
            throw new IllegalArgumentException("block " + rows + "x" + cols + " at (" + r0 + ", " + c0
                    + ") is outside a " + m.getRows() + "x" + m.getCols() + " matrix");
        }
        double[] src = values(m);
        double[] out = new double[rows * cols];
        for (int r = 0; r < rows; r++) {
            System.arraycopy(src, (r0 + r) * m.getCols() + c0, out, r * cols, cols);
        }
        return of(rows, cols, out);
    }

    /** Copies {@code part} into {@code target} with its top-left corner at (r0, c0). */
    public static void put(Block target, Block part, int r0, int c0) {
        check(part, "part");
        if (r0 < 0 || c0 < 0 || r0 + part.getRows() > target.getRows() || c0 + part.getCols() > target.getCols()) {
            throw new IllegalArgumentException("a " + part.getRows() + "x" + part.getCols() + " block does not fit at ("
                    + r0 + ", " + c0 + ") of a " + target.getRows() + "x" + target.getCols() + " matrix");
        }
        double[] dst = target.getValues();
        double[] src = values(part);
        for (int r = 0; r < part.getRows(); r++) {
            System.arraycopy(src, r * part.getCols(), dst, (r0 + r) * target.getCols() + c0, part.getCols());
        }
    }

    /**
     * Cuts {@code n} into {@code parts} nearly equal pieces: the offsets, {@code parts + 1} of them,
     * first 0 and last n. The first {@code n % parts} pieces are one longer.
     */
    public static int[] split(int n, int parts) {
        if (parts < 1) {
            throw new IllegalArgumentException("parts must be at least 1");
        }
        int[] at = new int[parts + 1];
        for (int p = 0; p < parts; p++) {
            at[p + 1] = at[p] + n / parts + (p < n % parts ? 1 : 0);
        }
        return at;
    }

    /** Whether both blocks have the same shape and the same values bit for bit. */
    public static boolean identical(Block x, Block y) {
        if (x.getRows() != y.getRows() || x.getCols() != y.getCols()) {
            return false;
        }
        double[] a = values(x);
        double[] b = values(y);
        for (int i = 0; i < a.length; i++) {
            if (Double.doubleToLongBits(a[i]) != Double.doubleToLongBits(b[i])) {
                return false;
            }
        }
        return true;
    }
}
