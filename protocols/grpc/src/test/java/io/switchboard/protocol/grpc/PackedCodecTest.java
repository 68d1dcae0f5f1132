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
    void framesCarryBigArraysWithoutSplittingAValue() {
        double[] values = new double[(Frame.CHUNK_BYTES / 8) * 2 + 3];
        for (int i = 0; i < values.length; i++) {
            values[i] = Math.sqrt(i);
        }
        EchoDoubles d = new EchoDoubles();
        d.setValues(values);
        BinaryWriter out = new BinaryWriter(CODEC, 10);
        CODEC.writeMessage(out, d);
        Iterator<Frame> frames = Frame.split(out.segments(), out.size());
        int count = 0;
        long total = 0;
        java.util.List<ByteBuffer> pieces = new java.util.ArrayList<>();
        while (frames.hasNext()) {
            // through the protobuf encoding and back, as the peer's marshaller sees it
            byte[] wire = ((Frame.Outgoing) frames.next()).toBytes();
            Frame.Incoming chunk = (Frame.Incoming) Frame.MARSHALLER.parse(new java.io.ByteArrayInputStream(wire));
            assertEquals(null, chunk.error);
            assertEquals(total, chunk.offset, "each chunk says where its data starts");
            assertEquals(count == 0 ? out.size() : 0, chunk.total, "the first chunk, only, announces the total");
            assertTrue(chunk.dataLength <= Frame.CHUNK_BYTES);
            total += chunk.dataLength;
            pieces.addAll(chunk.data);
            count++;
        }
        assertEquals(out.size(), total);
        assertEquals(3, count);
        Iterator<ByteBuffer> it = pieces.iterator();
        BinaryReader in = new BinaryReader(CODEC, () -> it.hasNext() ? it.next() : null, BinaryLimits.unlimited());
        Values.assertSameDoubles(values, in.readMessage(EchoDoubles.class).getValues());
        in.expectEnd();
    }

    @Test
    void writerRefusesMoreNodesThanItsLimit() {
        EchoList l = new EchoList();
        l.setHead(Values.list(11));
        WireFormatException e = assertThrows(WireFormatException.class, () -> BinaryWriter.toBytes(CODEC, l, 10));
        assertEquals("node-limit", e.reason());
    }
}
