package io.switchboard.protocol.grpc;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.grpc.netty.shaded.io.netty.buffer.ByteBuf;
import io.grpc.netty.shaded.io.netty.buffer.ByteBufAllocator;
import io.grpc.netty.shaded.io.netty.buffer.CompositeByteBuf;
import io.grpc.netty.shaded.io.netty.buffer.UnpooledByteBufAllocator;
import java.io.ByteArrayOutputStream;
import java.util.Random;
import org.junit.jupiter.api.Test;

class ComposingCumulatorTest {
    private final ByteBufAllocator alloc = new UnpooledByteBufAllocator(true);
    private final ComposingCumulator cumulator = new ComposingCumulator();
    private final Random random = new Random(43);

    private ByteBuf read(byte[] bytes) {
        return alloc.directBuffer(bytes.length).writeBytes(bytes);
    }

    private byte[] bytes(int n) {
        byte[] b = new byte[n];
        random.nextBytes(b);
        return b;
    }

    private static byte[] readable(ByteBuf b) {
        byte[] out = new byte[b.readableBytes()];
        b.getBytes(b.readerIndex(), out);
        return out;
    }

    @Test
    void aLargeReadBehindUndecodedBytesIsAddedWithoutCopying() {
        byte[] first = bytes(10_000);
        byte[] second = bytes(64 << 10);
        ByteBuf cumulation = read(first);
        cumulation.skipBytes(3_000); // a decoded frame before the rest of the next one
        ByteBuf in = read(second);
        ByteBuf out = cumulator.cumulate(alloc, cumulation, in);
        try {
            assertTrue(out instanceof CompositeByteBuf, out.toString());
            ByteArrayOutputStream expected = new ByteArrayOutputStream();
            expected.write(first, 3_000, 7_000);
            expected.write(second, 0, second.length);
            assertArrayEquals(expected.toByteArray(), readable(out));
            // the read's own memory is a component: a change to it shows through (nothing copied)
            in.setByte(0, ~second[0]);
            assertEquals((byte) ~second[0], out.getByte(out.readerIndex() + 7_000));
        } finally {
            out.release();
        }
        assertEquals(0, in.refCnt(), "the composite released the read with itself");
    }

    @Test
    void smallReadsAreCopiedAsNettysDefaultDoes() {
        byte[] first = bytes(1_000);
        byte[] second = bytes(ComposingCumulator.MIN_COMPOSED_BYTES - 1);
        ByteBuf out = cumulator.cumulate(alloc, read(first), read(second));
        try {
            assertFalse(out instanceof CompositeByteBuf, out.toString());
            ByteArrayOutputStream expected = new ByteArrayOutputStream();
            expected.write(first, 0, first.length);
            expected.write(second, 0, second.length);
            assertArrayEquals(expected.toByteArray(), readable(out));
        } finally {
            out.release();
        }
    }

    @Test
    void anEmptyCumulationGivesTheReadItself() {
        ByteBuf empty = alloc.directBuffer(16);
        ByteBuf in = read(bytes(100 << 10));
        assertSame(in, cumulator.cumulate(alloc, empty, in));
        assertEquals(0, empty.refCnt());
        in.release();
    }

    @Test
    void framesSlicedOffTheCumulationStayIntactWhenMoreArrives() {
        byte[] a = bytes(40 << 10);
        byte[] b = bytes(40 << 10);
        byte[] c = bytes(40 << 10);
        ByteBuf cumulation = cumulator.cumulate(alloc, read(a), read(b));
        // the decoder hands a frame's payload on as a retained slice, and the cumulation goes on
        ByteBuf frame = cumulation.readRetainedSlice(50 << 10);
        ByteBuf out = cumulator.cumulate(alloc, cumulation, read(c));
        try {
            ByteArrayOutputStream payload = new ByteArrayOutputStream();
            payload.write(a, 0, a.length);
            payload.write(b, 0, (50 << 10) - a.length);
            assertArrayEquals(payload.toByteArray(), readable(frame));
            ByteArrayOutputStream rest = new ByteArrayOutputStream();
            rest.write(b, (50 << 10) - a.length, b.length - ((50 << 10) - a.length));
            rest.write(c, 0, c.length);
            assertArrayEquals(rest.toByteArray(), readable(out));
        } finally {
            frame.release();
            out.release();
        }
    }

    @Test
    void aSenderTricklingSingleBytesBehindALargeReadCannotGrowTheComponents() {
        byte[] head = bytes(64 << 10);
        ByteBuf cumulation = cumulator.cumulate(alloc, read(bytes(10)), read(head));
        cumulation.skipBytes(10);
        ByteArrayOutputStream expected = new ByteArrayOutputStream();
        expected.write(head, 0, head.length);
        for (int i = 0; i < 100_000; i++) {
            byte[] one = {(byte) i};
            expected.write(one, 0, 1);
            cumulation = cumulator.cumulate(alloc, cumulation, read(one));
        }
        try {
            assertArrayEquals(expected.toByteArray(), readable(cumulation));
            if (cumulation instanceof CompositeByteBuf composite) {
                // one-byte reads are merged into growing buffers, not added one component each
                assertTrue(composite.numComponents() < 40, composite.numComponents() + " components");
            }
        } finally {
            cumulation.release();
        }
    }
}
