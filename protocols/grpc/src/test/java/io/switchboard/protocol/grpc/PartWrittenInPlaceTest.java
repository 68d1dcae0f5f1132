package io.switchboard.protocol.grpc;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.grpc.Drainable;
import io.grpc.KnownLength;
import io.switchboard.codec.proto.ProtoCodec;
import io.switchboard.codec.proto.ProtoOutput;
import io.switchboard.testing.conformance.ConformanceComponent;
import io.switchboard.testing.conformance.EchoDoubles;
import io.switchboard.testing.conformance.Values;
import java.io.ByteArrayOutputStream;
import java.io.InputStream;
import org.junit.jupiter.api.Test;

/**
 * A part of a message of several, written as gRPC drains it ({@code Part(writer, target, block)}),
 * is byte for byte the part written into an array, whatever the block size; it is not
 * {@link KnownLength} (gRPC prefixes its length after draining it).
 */
class PartWrittenInPlaceTest {
    private static final ProtoCodec CODEC = ConformanceComponent.DESCRIPTOR.codec(ProtoCodec.class);

    @Test
    void everyMessageShapeWrittenThroughABlockIsTheArrayWrittenOne() throws Exception {
        for (Object[] shape : Values.messageShapes()) {
            String element = (String) shape[0];
            for (int target : new int[] {64, 4096, ProtoCodec.PART_BYTES}) {
                for (int block : new int[] {16, 17, 100, Part.BLOCK_BYTES}) {
                    assertArrayEquals(inArrays(element, shape[1], target), drained(element, shape[1], target, block),
                            element + ", parts of " + target + ", block of " + block);
                }
            }
        }
    }

    @Test
    void aBigArrayWrittenThroughABlockIsTheArrayWrittenOne() throws Exception {
        double[] values = new double[(ProtoCodec.PART_BYTES / 8) * 2 + 3];
        for (int i = 0; i < values.length; i++) {
            values[i] = Values.EDGE_DOUBLES[i % Values.EDGE_DOUBLES.length] * (i % 3 == 0 ? 1 : i);
        }
        EchoDoubles d = new EchoDoubles();
        d.setValues(values);
        assertArrayEquals(inArrays("echoDoubles", d, ProtoCodec.PART_BYTES),
                drained("echoDoubles", d, ProtoCodec.PART_BYTES, Part.BLOCK_BYTES));
    }

    @Test
    void aPartNotTakenIsNotWritten() throws Exception {
        EchoDoubles d = new EchoDoubles();
        d.setValues(new double[1000]);
        ProtoCodec.Writer w = CODEC.writer("echoDoubles", d, 10);
        Part part = new Part(w, 1024, new byte[64]);
        InputStream stream = Part.MARSHALLER.stream(part);
        assertFalse(stream instanceof KnownLength, "its length is known once it is written");
        assertFalse(part.taken());
        assertEquals(0, part.wireLength(), "nothing on the wire");
        stream.close(); // what gRPC does with a message for a call that is over
        assertFalse(part.taken());
        assertTrue(w.hasMore(), "the writer is where it was");
    }

    /** The parts written into one array each, concatenated. */
    private static byte[] inArrays(String element, Object value, int target) {
        ProtoCodec.Writer w = CODEC.writer(element, value, 1_000_000);
        ProtoOutput out = new ProtoOutput(64);
        ByteArrayOutputStream all = new ByteArrayOutputStream();
        do {
            out.reset();
            w.writePart(out, target);
            all.writeBytes(out.toByteArray());
        } while (w.hasMore());
        return all.toByteArray();
    }

    /** The parts written as gRPC drains them, concatenated, each drain's count checked. */
    private static byte[] drained(String element, Object value, int target, int block) throws Exception {
        ProtoCodec.Writer w = CODEC.writer(element, value, 1_000_000);
        byte[] b = new byte[block];
        ByteArrayOutputStream all = new ByteArrayOutputStream();
        do {
            Part part = new Part(w, target, b);
            InputStream stream = Part.MARSHALLER.stream(part);
            int before = all.size();
            int n = ((Drainable) stream).drainTo(all);
            assertTrue(part.taken());
            assertEquals(all.size() - before, n);
            assertEquals(n + 5L, part.wireLength());
            assertEquals(0, ((Drainable) stream).drainTo(all), "drained once");
        } while (w.hasMore());
        return all.toByteArray();
    }
}
