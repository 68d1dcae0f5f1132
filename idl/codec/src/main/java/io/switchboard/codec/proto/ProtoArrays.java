package io.switchboard.codec.proto;

import io.switchboard.codec.message.WireFormatException;
import java.util.Arrays;

/**
 * Growing primitive arrays for the repeated numbers of a message being read: each occurrence of
 * the field (a packed piece in one part, or a single value) is appended with one bulk copy, so a
 * packed array cut across parts reads back whole. Generated readers hold one per repeated number
 * field and take the array at the end.
 */
public final class ProtoArrays {
    private ProtoArrays() {
    }

    public static final class Doubles {
        private final boolean topLevel;
        private double[] a = new double[0];
        private int n;

        /** {@code topLevel}: a field of the operation message, sized by the message's announced size. */
        public Doubles(boolean topLevel) {
            this.topLevel = topLevel;
        }

        public void append(ProtoInput in, int tag, ProtoReadState r) {
            int more = in.fixedCount(tag, ProtoOutput.FIXED64, 8);
            if (a.length - n < more) {
                a = Arrays.copyOf(a, r.capacity(a.length, n, more, 8, topLevel));
            }
            in.getDoubles(a, n, more);
            n += more;
        }

        /** Starts from the values a merged-into bean already holds. */
        public void prepend(double[] values) {
            if (values != null && n == 0) {
                a = values;
                n = values.length;
            }
        }

        public double[] toArray() {
            return n == a.length ? a : Arrays.copyOf(a, n);
        }
    }

    public static final class Floats {
        private final boolean topLevel;
        private float[] a = new float[0];
        private int n;

        /** {@code topLevel}: a field of the operation message, sized by the message's announced size. */
        public Floats(boolean topLevel) {
            this.topLevel = topLevel;
        }

        public void append(ProtoInput in, int tag, ProtoReadState r) {
            int more = in.fixedCount(tag, ProtoOutput.FIXED32, 4);
            if (a.length - n < more) {
                a = Arrays.copyOf(a, r.capacity(a.length, n, more, 4, topLevel));
            }
            in.getFloats(a, n, more);
            n += more;
        }

        /** Starts from the values a merged-into bean already holds. */
        public void prepend(float[] values) {
            if (values != null && n == 0) {
                a = values;
                n = values.length;
            }
        }

        public float[] toArray() {
            return n == a.length ? a : Arrays.copyOf(a, n);
        }
    }

    /** sfixed32 values: a schema int array. */
    public static final class Ints {
        private final boolean topLevel;
        private int[] a = new int[0];
        private int n;

        /** {@code topLevel}: a field of the operation message, sized by the message's announced size. */
        public Ints(boolean topLevel) {
            this.topLevel = topLevel;
        }

        public void append(ProtoInput in, int tag, ProtoReadState r) {
            int more = in.fixedCount(tag, ProtoOutput.FIXED32, 4);
            if (a.length - n < more) {
                a = Arrays.copyOf(a, r.capacity(a.length, n, more, 4, topLevel));
            }
            in.getInts(a, n, more);
            n += more;
        }

        /** Starts from the values a merged-into bean already holds. */
        public void prepend(int[] values) {
            if (values != null && n == 0) {
                a = values;
                n = values.length;
            }
        }

        public void prepend(short[] values) {
            if (values != null && n == 0) {
                a = new int[values.length];
                for (int i = 0; i < values.length; i++) {
                    a[i] = values[i];
                }
                n = values.length;
            }
        }

        public int[] toArray() {
            return n == a.length ? a : Arrays.copyOf(a, n);
        }

        /** The values as a schema short array, each checked to fit. */
        public short[] toShorts(String field) {
            short[] s = new short[n];
            for (int i = 0; i < n; i++) {
                s[i] = ProtoReadState.toShort(a[i], field);
            }
            return s;
        }
    }

    /** sfixed64 values: a schema long array. */
    public static final class Longs {
        private final boolean topLevel;
        private long[] a = new long[0];
        private int n;

        /** {@code topLevel}: a field of the operation message, sized by the message's announced size. */
        public Longs(boolean topLevel) {
            this.topLevel = topLevel;
        }

        public void append(ProtoInput in, int tag, ProtoReadState r) {
            int more = in.fixedCount(tag, ProtoOutput.FIXED64, 8);
            if (a.length - n < more) {
                a = Arrays.copyOf(a, r.capacity(a.length, n, more, 8, topLevel));
            }
            in.getLongs(a, n, more);
            n += more;
        }

        /** Starts from the values a merged-into bean already holds. */
        public void prepend(long[] values) {
            if (values != null && n == 0) {
                a = values;
                n = values.length;
            }
        }

        public long[] toArray() {
            return n == a.length ? a : Arrays.copyOf(a, n);
        }
    }

    public static final class Booleans {
        private boolean[] a = new boolean[0];
        private int n;

        /** {@code topLevel} is for symmetry: one byte per value needs no sizing ahead. */
        public Booleans(boolean topLevel) {
        }

        public void append(ProtoInput in, int tag, ProtoReadState r) {
            int end = in.varintsEnd(tag);
            if (end < 0) {
                add(in.readBool(), r);
                return;
            }
            while (in.position() < end) {
                add(in.readBool(), r);
            }
            in.endVarints(end);
        }

        private void add(boolean v, ProtoReadState r) {
            if (n == a.length) {
                a = Arrays.copyOf(a, r.capacity(a.length, n, 1, 1, false));
            }
            a[n++] = v;
        }

        /** Starts from the values a merged-into bean already holds. */
        public void prepend(boolean[] values) {
            if (values != null && n == 0) {
                a = values;
                n = values.length;
            }
        }

        public boolean[] toArray() {
            return n == a.length ? a : Arrays.copyOf(a, n);
        }
    }

    /** uint32 node numbers (a repeated reference), or int32 positions of the null list. */
    public static final class Varints {
        private int[] a = new int[0];
        private int n;

        public void append(ProtoInput in, int tag, ProtoReadState r) {
            int end = in.varintsEnd(tag);
            if (end < 0) {
                add(in.readVarint32(), r);
                return;
            }
            while (in.position() < end) {
                add(in.readVarint32(), r);
            }
            in.endVarints(end);
        }

        private void add(int v, ProtoReadState r) {
            if (n == a.length) {
                a = Arrays.copyOf(a, r.capacity(a.length, n, 1, 1, false));
            }
            a[n++] = v;
        }

        public int size() {
            return n;
        }

        public int get(int i) {
            if (i >= n) {
                throw WireFormatException.malformed("index " + i + " of " + n);
            }
            return a[i];
        }
    }
}
