package io.switchboard.codec.proto;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
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
}
