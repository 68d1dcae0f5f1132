package io.switchboard.protocol.grpc;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.switchboard.codec.binary.BinaryCodec;
import io.switchboard.codec.binary.BinaryLimits;
import io.switchboard.codec.binary.BinaryReader;
import io.switchboard.codec.binary.BinaryWriter;
import io.switchboard.codec.binary.WireFormatException;
import io.switchboard.testing.conformance.ConformanceComponent;
import io.switchboard.testing.conformance.EchoDoubles;
import io.switchboard.testing.conformance.EchoList;
import io.switchboard.testing.conformance.EchoRecord;
import io.switchboard.testing.conformance.Record;
import io.switchboard.testing.conformance.Values;
import java.nio.ByteBuffer;
import java.util.Iterator;
import org.junit.jupiter.api.Test;

/** The generated codec and the chunking, without a network: every value may be cut anywhere. */
class PackedCodecTest {
    private static final BinaryCodec CODEC = ConformanceComponent.DESCRIPTOR.codec(BinaryCodec.class);

    /** Decodes from chunks of {@code size} bytes, so values straddle chunk boundaries. */
    private static <T> T readInPieces(byte[] bytes, int size, Class<T> type) {
        int[] at = {0};
        BinaryReader in = new BinaryReader(CODEC, () -> {
            if (at[0] >= bytes.length) {
                return null;
            }
            int n = Math.min(size, bytes.length - at[0]);
            ByteBuffer b = ByteBuffer.wrap(bytes, at[0], n).slice();
            at[0] += n;
            return b;
        }, BinaryLimits.unlimited());
        T message = in.readMessage(type);
        in.expectEnd();
        return message;
    }

    @Test
    void recordsSurviveBeingCutIntoPiecesOfAnySize() {
        for (Record r : new Record[] {Values.fullRecord(), Values.emptyRecord(), new Record(), null}) {
            EchoRecord m = new EchoRecord();
            m.setRecord(r);
            byte[] bytes = BinaryWriter.toBytes(CODEC, m, 10);
            for (int size : new int[] {1, 2, 3, 5, 7, 13}) {
                Values.assertSameRecord(r, readInPieces(bytes, size, EchoRecord.class).getRecord());
            }
        }
    }

    @Test
    void packedArraysAndListsSurviveOddChunkSizes() {
        EchoDoubles d = new EchoDoubles();
        d.setValues(Values.EDGE_DOUBLES.clone());
        byte[] bytes = BinaryWriter.toBytes(CODEC, d, 10);
        assertEquals(1 + 1 + 1 + Values.EDGE_DOUBLES.length * 8, bytes.length, "nodes, tag, count, raw doubles");
        for (int size : new int[] {1, 3, 5, 9}) {
            Values.assertSameDoubles(Values.EDGE_DOUBLES, readInPieces(bytes, size, EchoDoubles.class).getValues());
        }
        EchoList l = new EchoList();
        l.setHead(Values.list(50));
        byte[] list = BinaryWriter.toBytes(CODEC, l, 100);
        Values.assertSameList(l.getHead(), readInPieces(list, 3, EchoList.class).getHead());
    }

    @Test
    void partsCarryBigArraysCutInsideThePackedField() {
        io.switchboard.codec.proto.ProtoCodec proto = ConformanceComponent.DESCRIPTOR.codec(
                io.switchboard.codec.proto.ProtoCodec.class);
        double[] values = new double[(io.switchboard.codec.proto.ProtoCodec.PART_BYTES / 8) * 2 + 3];
        for (int i = 0; i < values.length; i++) {
            values[i] = Math.sqrt(i);
        }
        EchoDoubles d = new EchoDoubles();
        d.setValues(values);
        io.switchboard.codec.proto.ProtoCodec.Writer w = proto.writer("echoDoubles", d, 10);
        assertEquals(1 + 4 + values.length * 8L, w.size(), "tag, length, raw doubles");
        io.switchboard.codec.proto.ProtoCodec.Reader r = proto.reader("echoDoubles", BinaryLimits.unlimited(), w.size());
        io.switchboard.codec.proto.ProtoOutput out = new io.switchboard.codec.proto.ProtoOutput(1 << 20);
        int count = 0;
        do {
            out.reset();
            w.writePart(out, io.switchboard.codec.proto.ProtoCodec.PART_BYTES);
            assertTrue(out.size() <= io.switchboard.codec.proto.ProtoCodec.PART_BYTES, "a part holds at most its target");
            byte[] part = out.toByteArray();
            r.readPart(part, 0, part.length);
            count++;
        } while (w.hasMore());
        assertEquals(3, count);
        Values.assertSameDoubles(values, ((EchoDoubles) r.finish()).getValues());
    }

    @Test
    void writerRefusesMoreNodesThanItsLimit() {
        EchoList l = new EchoList();
        l.setHead(Values.list(11));
        WireFormatException e = assertThrows(WireFormatException.class, () -> BinaryWriter.toBytes(CODEC, l, 10));
        assertEquals("node-limit", e.reason());
    }
}
