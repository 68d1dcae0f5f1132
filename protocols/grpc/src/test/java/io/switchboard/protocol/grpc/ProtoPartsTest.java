package io.switchboard.protocol.grpc;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.switchboard.codec.message.MessageChecks;
import io.switchboard.codec.message.MessageLimits;
import io.switchboard.codec.message.WireFormatException;
import io.switchboard.codec.proto.ProtoCodec;
import io.switchboard.codec.proto.ProtoOutput;
import io.switchboard.testing.conformance.ConformanceComponent;
import io.switchboard.testing.conformance.EchoDoubles;
import io.switchboard.testing.conformance.EchoList;
import io.switchboard.testing.conformance.Values;
import org.junit.jupiter.api.Test;

/** The generated protobuf codec's parts, without a network: a big array is cut inside its packed field. */
class ProtoPartsTest {
    private static final ProtoCodec CODEC = ConformanceComponent.DESCRIPTOR.codec(ProtoCodec.class);

    @Test
    void partsCarryBigArraysCutInsideThePackedField() {
        double[] values = new double[(ProtoCodec.PART_BYTES / 8) * 2 + 3];
        for (int i = 0; i < values.length; i++) {
            values[i] = Math.sqrt(i);
        }
        EchoDoubles d = new EchoDoubles();
        d.setValues(values);
        ProtoCodec.Writer w = CODEC.writer("echoDoubles", d, 10);
        assertEquals(1 + 4 + values.length * 8L, w.size(), "tag, length, raw doubles");
        ProtoCodec.Reader r = CODEC.reader("echoDoubles", MessageLimits.unlimited(), w.size());
        ProtoOutput out = new ProtoOutput(1 << 20);
        int count = 0;
        do {
            out.reset();
            w.writePart(out, ProtoCodec.PART_BYTES);
            assertTrue(out.size() <= ProtoCodec.PART_BYTES, "a part holds at most its target");
            byte[] part = out.toByteArray();
            r.readPart(part, 0, part.length);
            count++;
        } while (w.hasMore());
        assertEquals(3, count);
        Values.assertSameDoubles(values, ((EchoDoubles) r.finish()).getValues());
    }

    @Test
    void moreNodesThanTheSendersLimitAreRefusedBeforeSending() {
        EchoList l = new EchoList();
        l.setHead(Values.list(11));
        WireFormatException e = assertThrows(WireFormatException.class,
                () -> MessageChecks.of(ConformanceComponent.DESCRIPTOR).check(l, 10));
        assertEquals(WireFormatException.NODE_LIMIT, e.reason());
        e = assertThrows(WireFormatException.class, () -> CODEC.writer("echoList", l, 10));
        assertEquals(WireFormatException.NODE_LIMIT, e.reason());
        MessageChecks.of(ConformanceComponent.DESCRIPTOR).check(l, 11);
    }
}
