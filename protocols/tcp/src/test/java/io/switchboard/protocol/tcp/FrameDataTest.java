package io.switchboard.protocol.tcp;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotSame;
import static org.junit.jupiter.api.Assertions.assertSame;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import io.switchboard.codec.message.MessageLimits;
import io.switchboard.codec.proto.ProtoCodec;
import io.switchboard.testing.conformance.ConformanceComponent;
import io.switchboard.testing.conformance.EchoDoubles;
import java.util.Map;
import org.junit.jupiter.api.Test;

/** A frame's data read in place from a heap buffer's array or through a direct buffer, and copied out of its connection's buffer. */
class FrameDataTest {
    private static final ProtoCodec CODEC = ConformanceComponent.DESCRIPTOR.codec(ProtoCodec.class);
    private static final RpcMeta META = RpcMeta.response(9, 0, null, null);
    private static final double[] VALUES = {Double.NaN, -0.0, Double.NEGATIVE_INFINITY, Double.MIN_VALUE, 1e308};

    private static byte[] message() {
        EchoDoubles m = new EchoDoubles();
        m.setValues(VALUES.clone());
        return CODEC.toBytes("echoDoubles", m, 10);
    }

    private static double[] read(ByteBuf data) {
        ProtoCodec.Reader r = CODEC.reader("echoDoubles", MessageLimits.of(1 << 20, 10), data.readableBytes());
        Frame.readInto(r, data);
        return ((EchoDoubles) r.finish()).getValues();
    }

    private static void assertBitExact(double[] back) {
        assertEquals(VALUES.length, back.length);
        for (int i = 0; i < VALUES.length; i++) {
            assertEquals(Double.doubleToRawLongBits(VALUES[i]), Double.doubleToRawLongBits(back[i]), "value " + i);
        }
    }

    @Test
    void aHeapSliceIsReadInPlaceFromItsOwnBytesOnly() {
        byte[] m = message();
        // the message in the middle of a larger array, behind a reader index: only its own bytes count
        ByteBuf whole = Unpooled.buffer(7 + m.length + 5).writeBytes(new byte[] {1, 2, 3, 4, 5, 6, 7}).writeBytes(m)
                .writeBytes(new byte[] {9, 9, 9, 9, 9});
        ByteBuf data = whole.slice(3, 4 + m.length).skipBytes(4);
        assertBitExact(read(data));
        assertEquals(0, data.readableBytes(), "the data is consumed as through a source");
    }

    @Test
    void aDirectBufferIsReadThroughASource() {
        byte[] m = message();
        ByteBuf direct = Unpooled.directBuffer(m.length).writeBytes(m);
        try {
            assertBitExact(read(direct));
        } finally {
            direct.release();
        }
    }

    @Test
    void aSmallAnswerIsCopiedAndItsSliceFreedSoTheConnectionBufferCanBeReused() {
        byte[] m = message();
        ByteBuf received = Unpooled.buffer(64).writeBytes(m);
        Frame frame = new Frame(META, received.retainedSlice(0, m.length), m.length, Frame.HEADER_BYTES + m.length);
        received.skipBytes(m.length);

        Frame copied = frame.detached(m.length);
        assertNotSame(frame, copied);
        assertEquals(1, received.refCnt(), "only the connection holds its buffer now");
        assertSame(META, copied.meta);
        assertEquals(frame.wireBytes, copied.wireBytes);
        received.clear().writeBytes(new byte[m.length]);   // the next read overwrites the buffer
        assertBitExact(read(copied.data));
        copied.release();

        Frame large = new Frame(META, received.retainedSlice(0, m.length), m.length, 0);
        assertSame(large, large.detached(m.length - 1), "a larger answer keeps its slice");
        assertEquals(2, received.refCnt());
        large.release();
        assertEquals(1, received.refCnt());
    }

    @Test
    void aFrameWithoutDataStaysAsItIs() {
        Frame skipped = new Frame(RpcMeta.request("s", "m", null, 0, 1, Map.of()), null, 1 << 30, 12);
        assertSame(skipped, skipped.detached(1 << 20));
    }
}
