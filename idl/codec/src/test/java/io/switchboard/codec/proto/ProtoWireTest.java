package io.switchboard.codec.proto;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.google.protobuf.CodedOutputStream;
import io.switchboard.codec.message.MessageLimits;
import io.switchboard.codec.message.WireFormatException;
import java.io.ByteArrayOutputStream;
import java.nio.charset.StandardCharsets;
import java.util.Random;
import org.junit.jupiter.api.Test;

/** ProtoOutput writes protobuf-java's bytes exactly; ProtoInput reads them and refuses what protobuf-java refuses. */
class ProtoWireTest {
    private static final MessageLimits LIMITS = MessageLimits.of(1 << 20, 1000);
    private static final double[] EDGE = {0.0, -0.0, Double.NaN, Double.longBitsToDouble(0x7ff0000000000001L),
        Double.longBitsToDouble(0xfff8000000000abcL), Double.POSITIVE_INFINITY, Double.NEGATIVE_INFINITY,
        Double.MIN_VALUE, Double.MAX_VALUE, 1e-310, Math.PI};

    @Test
    void everyPrimitiveIsProtobufsOwnEncoding() throws Exception {
        Random random = new Random(14);
        int[] ints = random.ints(100).toArray();
        long[] longs = random.longs(100).toArray();
        float[] floats = {0f, -0f, Float.NaN, Float.intBitsToFloat(0x7fc00123), Float.MIN_VALUE, 16777217f};
        boolean[] bools = {true, false, true};
        String text = "r\uD83D\uDE00 \u4E2D\u6587 \uD834\uDD1E";

        ProtoOutput ours = new ProtoOutput(16);
        ByteArrayOutputStream theirsBytes = new ByteArrayOutputStream();
        CodedOutputStream theirs = CodedOutputStream.newInstance(theirsBytes);
        for (int v : new int[] {0, 1, -1, 127, 128, Integer.MIN_VALUE, Integer.MAX_VALUE}) {
            ours.writeInt32(1, v);
            theirs.writeInt32(1, v);
            ours.writeUInt32(2, v);
            theirs.writeUInt32(2, v);
        }
        for (long v : new long[] {0, -1, Long.MIN_VALUE, Long.MAX_VALUE, 300}) {
            ours.writeInt64(3, v);
            theirs.writeInt64(3, v);
        }
        ours.writeBool(4, true);
        theirs.writeBool(4, true);
        for (double v : EDGE) {
            ours.writeDouble(5, v);
            theirs.writeDouble(5, v);
        }
        ours.writeFloat(6, floats[3]);
        theirs.writeFloat(6, floats[3]);
        ours.writeString(7, text);
        theirs.writeString(7, text);
        ours.writeBytes(8, new byte[] {0, -1, 127, -128}, 0, 4);
        theirs.writeByteArray(8, new byte[] {0, -1, 127, -128});

        ours.writePackedDoubles(9, EDGE, 0, EDGE.length);
        theirs.writeTag(9, 2);
        theirs.writeUInt32NoTag(EDGE.length * 8);
        for (double v : EDGE) {
            theirs.writeDoubleNoTag(v);
        }
        ours.writePackedFloats(10, floats, 0, floats.length);
        theirs.writeTag(10, 2);
        theirs.writeUInt32NoTag(floats.length * 4);
        for (float v : floats) {
            theirs.writeFloatNoTag(v);
        }
        ours.writePackedSFixed32(11, ints, 0, ints.length);
        theirs.writeTag(11, 2);
        theirs.writeUInt32NoTag(ints.length * 4);
        for (int v : ints) {
            theirs.writeSFixed32NoTag(v);
        }
        ours.writePackedSFixed64(12, longs, 10, 60);
        theirs.writeTag(12, 2);
        theirs.writeUInt32NoTag(50 * 8);
        for (int i = 10; i < 60; i++) {
            theirs.writeSFixed64NoTag(longs[i]);
        }
        ours.writePackedBools(13, bools, 0, bools.length);
        theirs.writeTag(13, 2);
        theirs.writeUInt32NoTag(bools.length);
        for (boolean v : bools) {
            theirs.writeBoolNoTag(v);
        }
        ours.writePackedDoubles(14, EDGE, 3, 3); // empty: proto3 writes nothing
        ours.writeLengthDelimited(2047, 0);
        theirs.writeTag(2047, 2);
        theirs.writeUInt32NoTag(0);
        theirs.flush();
        assertArrayEquals(theirsBytes.toByteArray(), ours.toByteArray());
    }

    @Test
    void varintSizesAreProtobufs() {
        for (int v : new int[] {0, 1, 127, 128, 16383, 16384, Integer.MAX_VALUE, -1}) {
            assertEquals(CodedOutputStream.computeUInt32SizeNoTag(v), ProtoOutput.varint32Size(v), "uint32 " + v);
        }
        for (long v : new long[] {0, 1, 1L << 35, Long.MAX_VALUE, -1}) {
            assertEquals(CodedOutputStream.computeUInt64SizeNoTag(v), ProtoOutput.varint64Size(v), "uint64 " + v);
        }
    }

    /** Parts merge by concatenation: a double list cut into packed pieces, one unpacked element among them. */
    @Test
    void aRepeatedDoubleFieldInPiecesReadsAsOneList() throws Exception {
        ByteArrayOutputStream bytes = new ByteArrayOutputStream();
        CodedOutputStream out = CodedOutputStream.newInstance(bytes);
        out.writeTag(1, 2);
        out.writeUInt32NoTag(5 * 8);
        for (int i = 0; i < 5; i++) {
            out.writeDoubleNoTag(EDGE[i]);
        }
        out.writeString(2, "between");
        out.writeDouble(1, EDGE[5]);
        out.writeTag(1, 2);
        out.writeUInt32NoTag((EDGE.length - 6) * 8);
        for (int i = 6; i < EDGE.length; i++) {
            out.writeDoubleNoTag(EDGE[i]);
        }
        out.flush();
        byte[] wire = bytes.toByteArray();
        ProtoInput in = new ProtoInput(wire, 0, wire.length, LIMITS);
        double[] values = new double[0];
        int[] count = {0};
        String between = null;
        for (int tag = in.readTag(); tag != 0; tag = in.readTag()) {
            if (tag >>> 3 == 1) {
                values = in.appendDoubles(tag, values, count);
            } else {
                between = in.readString();
            }
        }
        assertEquals("between", between);
        assertEquals(EDGE.length, count[0]);
        for (int i = 0; i < EDGE.length; i++) {
            assertEquals(Double.doubleToRawLongBits(EDGE[i]), Double.doubleToRawLongBits(values[i]), "bits of " + i);
        }
    }

    @Test
    void malformedInputIsRefusedByName() {
        assertRefused(WireFormatException.MALFORMED, new byte[] {0x0A, 0x10, 1, 2}, in -> in.appendDoubles(in.readTag(),
                new double[0], new int[1]));                                     // packed length past the end
        assertRefused(WireFormatException.MALFORMED, new byte[] {8, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, 1},
                in -> {
                    in.readTag();
                    in.readVarint64();                                           // eleven-byte varint
                });
        assertRefused(WireFormatException.MALFORMED, new byte[] {0x0B}, ProtoInput::readTag);  // a group
        assertRefused(WireFormatException.MALFORMED, new byte[] {0x00}, ProtoInput::readTag);  // field 0
        assertRefused(WireFormatException.MALFORMED, new byte[] {0x12, 2, (byte) 0xC3, 0x28}, in -> {
            in.readTag();
            in.readString();                                                     // not UTF-8
        });
        byte[] long_ = new byte[3 + 2000];
        long_[0] = 0x12;
        long_[1] = (byte) (2000 & 0x7F | 0x80);
        long_[2] = (byte) (2000 >>> 7);
        WireFormatException overLimit = assertThrows(WireFormatException.class, () -> {
            ProtoInput in = new ProtoInput(long_, 0, long_.length, new MessageLimits(1 << 20, 10, 1000));
            in.readTag();
            in.readString();                                                     // 2000 bytes, limit 1000
        });
        assertEquals(WireFormatException.STRING_LIMIT, overLimit.reason());
        assertRefused(WireFormatException.MALFORMED, new byte[] {0x1A, 3, 8, 1}, in -> {
            in.readTag();
            in.beginMessage(in.readLength());                                    // nested length past the end
        });
    }

    private static void assertRefused(String reason, byte[] wire, java.util.function.Consumer<ProtoInput> read) {
        WireFormatException e = assertThrows(WireFormatException.class,
                () -> read.accept(new ProtoInput(wire, 0, wire.length, LIMITS)));
        assertEquals(reason, e.reason(), e.getMessage());
        assertTrue(e.getMessage().length() > 10, "says what was wrong: " + e.getMessage());
    }

    @Test
    void stringsDecodeAsUtf8() {
        byte[] utf8 = "\uD83D\uDE00".getBytes(StandardCharsets.UTF_8);
        ProtoOutput out = new ProtoOutput(4);
        out.writeString(1, "\uD83D\uDE00");
        byte[] wire = out.toByteArray();
        ProtoInput in = new ProtoInput(wire, 0, wire.length, LIMITS);
        assertEquals(10, in.readTag());
        assertEquals("\uD83D\uDE00", in.readString());
        assertEquals(2 + utf8.length, wire.length);
        assertTrue(in.atEnd());
    }
}
