package io.switchboard.codec.proto;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.ByteArrayOutputStream;
import java.util.function.Consumer;
import org.junit.jupiter.api.Test;

/** An output that streams through a small block writes the bytes of one that keeps them all. */
class ProtoOutputStreamingTest {
    @Test
    void everyWidthAndBlockSizeWritesTheBufferedBytes() {
        double[] doubles = new double[50_000];
        float[] floats = new float[50_000];
        int[] ints = new int[50_000];
        long[] longs = new long[50_000];
        for (int i = 0; i < doubles.length; i++) {
            doubles[i] = i % 3 == 0 ? Double.longBitsToDouble(0x7ff0_0000_0000_0001L + i) : -0.0 - i;
            floats[i] = i * 0.5f;
            ints[i] = -i;
            longs[i] = (long) i << 33;
        }
        String longString = "x".repeat(5_000);
        Consumer<ProtoOutput> fields = out -> {
            out.writeInt32(1, 7);
            out.writePackedDoubles(2, doubles, 3, doubles.length);
            out.writePackedFloats(3, floats, 0, floats.length);
            out.writeString(4, "between");
            out.writePackedSFixed32(5, ints, 0, ints.length);
            out.writeString(6, longString);
            out.writePackedSFixed64(7, longs, 1, longs.length);
        };
        ProtoOutput buffered = new ProtoOutput(64);
        fields.accept(buffered);
        byte[] expected = buffered.toByteArray();

        // 16: the smallest block; 17 and 1023: blocks that no fixed width divides; 1 MiB: larger than any field
        for (int block : new int[] {16, 17, 1023, 1 << 20}) {
            ByteArrayOutputStream sink = new ByteArrayOutputStream();
            ProtoOutput streaming = ProtoOutput.into(sink, new byte[block]);
            fields.accept(streaming);
            assertTrue(block >= expected.length || sink.size() > 0, "nothing handed on before the flush, block " + block);
            streaming.flush();
            assertArrayEquals(expected, sink.toByteArray(), "block of " + block + " bytes");
            assertEquals(expected.length, streaming.size(), "size() counts every byte, block of " + block);
        }
    }

    /**
     * An output over a used array (a transport's kept one) writes from its start what an output of
     * its own writes, shows none of the array's old bytes, and goes on in a larger copy when full.
     */
    @Test
    void anOutputOverAUsedArrayWritesFromItsStartAndGrowsWhenFull() {
        double[] values = {1.5, -0.0, Double.NaN, Double.NEGATIVE_INFINITY, 4e300};
        ProtoOutput own = new ProtoOutput(16);
        own.writeInt32(1, 7);
        own.writePackedDoubles(2, values, 0, values.length);
        byte[] expected = own.toByteArray();

        byte[] used = new byte[expected.length + 100];
        java.util.Arrays.fill(used, (byte) 0x5A);
        ProtoOutput over = ProtoOutput.over(used);
        over.writeInt32(1, 7);
        over.writePackedDoubles(2, values, 0, values.length);
        assertEquals(expected.length, over.size());
        assertTrue(over.array() == used, "written into the array given");
        assertArrayEquals(expected, over.toByteArray(), "its own bytes only, none of the array's old ones");

        ProtoOutput small = ProtoOutput.over(new byte[16]);
        small.writeInt32(1, 7);
        small.writePackedDoubles(2, values, 0, values.length);
        assertArrayEquals(expected, small.toByteArray(), "grown into a larger copy");
        assertFalse(small.array().length == 16);
    }

    /**
     * With canonical NaNs, every NaN (single or packed, double or float, split across blocks) is
     * written as Java's one NaN, and nothing else changes: the bytes equal those of the same
     * fields with the NaNs replaced by {@link Double#NaN} beforehand.
     */
    @Test
    void canonicalNaNsWriteEveryNaNAsOneAndEveryOtherValueExactly() {
        double[] doubles = new double[5_000];
        float[] floats = new float[5_000];
        double[] canonicalDoubles = new double[doubles.length];
        float[] canonicalFloats = new float[floats.length];
        for (int i = 0; i < doubles.length; i++) {
            boolean nan = i % 7 == 0;
            doubles[i] = nan ? Double.longBitsToDouble((i % 2 == 0 ? 0x7ff0_0000_0000_0001L : 0xfff8_0000_0000_0000L) + i)
                    : i % 7 == 1 ? -0.0 : i * 0.25;
            floats[i] = nan ? Float.intBitsToFloat(0xff80_0001 + i) : i % 7 == 1 ? -0.0f : i * 0.5f;
            canonicalDoubles[i] = nan ? Double.NaN : doubles[i];
            canonicalFloats[i] = nan ? Float.NaN : floats[i];
        }
        double oneNaN = Double.longBitsToDouble(0x7ff8_dead_beef_0001L);
        float oneFloatNaN = Float.intBitsToFloat(0x7fc0_0abc);
        ProtoOutput plain = new ProtoOutput(64);
        plain.writeDouble(1, Double.NaN);
        plain.writeFloat(2, Float.NaN);
        plain.writeDouble(3, -0.0);
        plain.writePackedDoubles(4, canonicalDoubles, 0, canonicalDoubles.length);
        plain.writePackedFloats(5, canonicalFloats, 0, canonicalFloats.length);
        byte[] expected = plain.toByteArray();

        for (int block : new int[] {16, 17, 1023, 1 << 20}) {
            ByteArrayOutputStream sink = new ByteArrayOutputStream();
            ProtoOutput canonical = ProtoOutput.into(sink, new byte[block]).canonicalNaNs();
            canonical.writeDouble(1, oneNaN);
            canonical.writeFloat(2, oneFloatNaN);
            canonical.writeDouble(3, -0.0);
            canonical.writePackedDoubles(4, doubles, 0, doubles.length);
            canonical.writePackedFloats(5, floats, 0, floats.length);
            canonical.flush();
            assertArrayEquals(expected, sink.toByteArray(), "block of " + block + " bytes");
        }
        ProtoOutput raw = new ProtoOutput(64);
        raw.writePackedDoubles(4, doubles, 0, doubles.length);
        ProtoOutput rawCanonical = new ProtoOutput(64);
        rawCanonical.writePackedDoubles(4, canonicalDoubles, 0, canonicalDoubles.length);
        assertFalse(java.util.Arrays.equals(raw.toByteArray(), rawCanonical.toByteArray()),
                "without it, NaN payloads are written as they are");
    }
}
