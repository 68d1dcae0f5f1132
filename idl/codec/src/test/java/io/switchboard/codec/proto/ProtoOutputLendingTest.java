package io.switchboard.codec.proto;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.ByteArrayOutputStream;
import java.nio.ByteBuffer;
import org.junit.jupiter.api.Test;

/** Packed numbers put into a sink's lent memory are the bytes the block would have written. */
class ProtoOutputLendingTest {
    /** A sink lending rooms of the given sizes in turn (0: none this time), appending what is filled. */
    private static final class Lender extends ByteArrayOutputStream implements ProtoOutput.LendingSink {
        private final int[] rooms;
        private int next;
        private ByteBuffer lent;
        long lentBytes;

        Lender(int... rooms) {
            this.rooms = rooms;
        }

        @Override
        public ByteBuffer room(int min) {
            int size = rooms[next++ % rooms.length];
            if (size < min) {
                return null;
            }
            lent = ByteBuffer.allocateDirect(size);
            return lent;
        }

        @Override
        public void filled(int bytes) {
            byte[] b = new byte[bytes];
            lent.get(0, b);
            write(b, 0, bytes);
            lentBytes += bytes;
        }
    }

    @Test
    void everyWidthAndRoomSizeWritesTheBlocksBytes() {
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
        for (int[] rooms : new int[][] {{1 << 20}, {13}, {7, 0, 4096}, {0}, {65_536, 3}}) {
            ByteArrayOutputStream plain = new ByteArrayOutputStream();
            Lender lender = new Lender(rooms);
            int[] sizes = new int[2];
            int k = 0;
            for (ByteArrayOutputStream sink : new ByteArrayOutputStream[] {plain, lender}) {
                ProtoOutput out = ProtoOutput.into(sink, new byte[1024]);
                out.writeInt32(1, 7);
                out.writePackedDoubles(2, doubles, 3, doubles.length);
                out.writePackedFloats(3, floats, 0, floats.length);
                out.writeString(4, "between");
                out.writePackedSFixed32(5, ints, 0, ints.length);
                out.writePackedSFixed64(6, longs, 1, longs.length);
                out.flush();
                sizes[k++] = out.size();
            }
            assertArrayEquals(plain.toByteArray(), lender.toByteArray(), "rooms " + java.util.Arrays.toString(rooms));
            assertEquals(plain.size(), sizes[0]);
            assertEquals(plain.size(), sizes[1], "size() counts lent bytes");
            if (rooms[0] >= 8 || rooms.length > 1) {
                assertTrue(lender.lentBytes > 0, "nothing lent with rooms " + java.util.Arrays.toString(rooms));
            }
        }
    }
}
