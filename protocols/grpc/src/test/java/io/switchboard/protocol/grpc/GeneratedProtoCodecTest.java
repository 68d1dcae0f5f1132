package io.switchboard.protocol.grpc;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.google.protobuf.ByteString;
import com.google.protobuf.CodedOutputStream;
import com.google.protobuf.Descriptors.Descriptor;
import com.google.protobuf.Descriptors.FieldDescriptor;
import com.google.protobuf.Descriptors.FileDescriptor;
import com.google.protobuf.DynamicMessage;
import com.google.protobuf.InvalidProtocolBufferException;
import io.switchboard.codec.message.MessageLimits;
import io.switchboard.codec.message.WireFormatException;
import io.switchboard.codec.proto.ProtoCodec;
import io.switchboard.codec.proto.ProtoOutput;
import io.switchboard.codec.proto.ProtoSchemas;
import io.switchboard.testing.ProtoParts;
import io.switchboard.testing.conformance.ConformanceComponent;
import io.switchboard.testing.conformance.DivideFault;
import io.switchboard.testing.conformance.EchoDoubles;
import io.switchboard.testing.conformance.EchoIntTensor;
import io.switchboard.testing.conformance.EchoList;
import io.switchboard.testing.conformance.EchoMixed;
import io.switchboard.testing.conformance.EchoRecord;
import io.switchboard.testing.conformance.EchoTensor;
import io.switchboard.testing.conformance.IntTensor;
import io.switchboard.testing.conformance.LinkEntry;
import io.switchboard.testing.conformance.Mixed;
import io.switchboard.testing.conformance.Ping;
import io.switchboard.testing.conformance.Record;
import io.switchboard.testing.conformance.Spin;
import io.switchboard.testing.conformance.Tensor;
import io.switchboard.testing.conformance.Values;
import java.io.ByteArrayOutputStream;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import org.junit.jupiter.api.Test;

/**
 * The generated protobuf codec of the conformance component against protobuf-java itself: for
 * every conformance shape, {@code DynamicMessage} (built from the typed {@code .proto}) parses
 * what the codec writes, field by field, and writes back the very same bytes; the codec reads
 * back what protobuf-java writes, including the unpacked form and parts merged in order; and
 * malformed input is refused by name.
 */
class GeneratedProtoCodecTest {
    private static final ProtoCodec CODEC = ConformanceComponent.DESCRIPTOR.codec(ProtoCodec.class);
    private static final FileDescriptor FILE = ProtoDescriptors.build(ProtoSchemas.typed(ConformanceComponent.DESCRIPTOR.model()));
    private static final MessageLimits LIMITS = MessageLimits.of(1L << 31, 2_000_000);

    private static Descriptor type(String name) {
        return FILE.findMessageTypeByName(name);
    }

    /** Writes with the codec, parses with protobuf-java, checks protobuf-java's bytes are the codec's, reads back. */
    private static DynamicMessage exact(String message, Object value) throws InvalidProtocolBufferException {
        byte[] bytes = CODEC.toBytes(message, value, 2_000_000);
        DynamicMessage parsed = parse(message, bytes);
        assertTrue(parsed.getUnknownFields().asMap().isEmpty(), "no unknown fields");
        assertArrayEquals(parsed.toByteArray(), bytes, message + ": protobuf-java writes the same bytes");
        assertEquals(bytes.length, CODEC.writer(message, value, 2_000_000).size(), "size pass");
        // in small parts: their concatenation is the same message, and the codec reads the parts back
        List<byte[]> parts = parts(message, value, 64);
        ByteArrayOutputStream all = new ByteArrayOutputStream();
        parts.forEach(all::writeBytes);
        assertEquals(parsed, parse(message, all.toByteArray()), "the merge of the parts");
        return parsed;
    }

    /** Lists 64 deep are 128 protobuf levels (list, element): over protobuf-java's default limit of 100. */
    private static DynamicMessage parse(String message, byte[] bytes) throws InvalidProtocolBufferException {
        com.google.protobuf.CodedInputStream in = com.google.protobuf.CodedInputStream.newInstance(bytes);
        in.setRecursionLimit(200);
        try {
            return DynamicMessage.newBuilder(type(message)).mergeFrom(in).build();
        } catch (InvalidProtocolBufferException e) {
            throw e;
        } catch (java.io.IOException e) {
            throw new AssertionError(e);
        }
    }

    static List<byte[]> parts(String message, Object value, int target) {
        return ProtoParts.of(CODEC.writer(message, value, 2_000_000), target);
    }

    static Object readParts(String message, List<byte[]> parts) {
        ProtoCodec.Reader r = CODEC.reader(message, LIMITS, -1);
        for (byte[] p : parts) {
            r.readPart(p, 0, p.length);
        }
        return r.finish();
    }

    private static Object roundTrip(String message, Object value) {
        Object whole = CODEC.fromBytes(message, CODEC.toBytes(message, value, 2_000_000), LIMITS);
        Object inParts = readParts(message, parts(message, value, 64));
        assertEquals(whole.getClass(), inParts.getClass());
        return inParts;
    }

    private static Object field(DynamicMessage m, String name) {
        return m.getField(m.getDescriptorForType().findFieldByName(name));
    }

    private static boolean has(DynamicMessage m, String name) {
        return m.hasField(m.getDescriptorForType().findFieldByName(name));
    }

    @Test
    void edgeDoubles() throws Exception {
        EchoDoubles v = new EchoDoubles();
        v.setValues(Values.EDGE_DOUBLES.clone());
        DynamicMessage m = exact("echoDoubles", v);
        @SuppressWarnings("unchecked")
        List<Double> values = (List<Double>) field(m, "values");
        double[] seen = values.stream().mapToDouble(Double::doubleValue).toArray();
        Values.assertSameDoubles(Values.EDGE_DOUBLES, seen);
        Values.assertSameDoubles(Values.EDGE_DOUBLES, ((EchoDoubles) roundTrip("echoDoubles", v)).getValues());
    }

    @Test
    void emptyAndNullArrays() throws Exception {
        EchoDoubles empty = new EchoDoubles();
        empty.setValues(new double[0]);
        assertEquals(0, CODEC.toBytes("echoDoubles", empty, 10).length, "an empty message is no bytes");
        assertEquals(0, ((EchoDoubles) roundTrip("echoDoubles", empty)).getValues().length);
        EchoDoubles none = new EchoDoubles();
        DynamicMessage m = exact("echoDoubles", none);
        DynamicMessage nulls = (DynamicMessage) field(m, "sb_nulls");
        assertEquals(List.of(1), field(nulls, "lists"), "values (field 1) is null, not empty");
        assertNull(((EchoDoubles) roundTrip("echoDoubles", none)).getValues());
    }

    @Test
    void fullAndEmptyRecords() throws Exception {
        EchoRecord full = new EchoRecord();
        full.setRecord(Values.fullRecord());
        DynamicMessage m = (DynamicMessage) field(exact("echoRecord", full), "record");
        assertEquals("r\uD83D\uDE00", field(m, "name"));
        assertEquals(-7, field(m, "count"));
        assertEquals(true, field(m, "flag"));
        assertEquals(-128, field(m, "small"));
        assertTrue(Float.isNaN((Float) field(m, "ratio")));
        assertEquals(ByteString.copyFrom(new byte[] {0, -1, 127, -128, 10}), field(m, "data"));
        DynamicMessage when = (DynamicMessage) field(m, "when");
        assertEquals(Values.fullRecord().getWhen().toEpochSecond(), field(when, "seconds"));
        assertEquals(123_000_000, field(when, "nanos"));
        assertEquals(19800, field(when, "offset_seconds"));
        assertEquals(List.of("a", "", "", "\uD834\uDD1E"), field(m, "tags"), "a null element is the default on the wire");
        assertEquals(List.of(Integer.MIN_VALUE, 0, Integer.MAX_VALUE), field(m, "ints"));
        assertEquals(List.of(Long.MIN_VALUE, Long.MAX_VALUE), field(m, "longs"));
        assertEquals(List.of(true, false, true), field(m, "flags"));
        assertEquals(3, ((List<?>) field(m, "points")).size());
        DynamicMessage nulls = (DynamicMessage) field(m, "sb_nulls");
        List<?> elements = (List<?>) field(nulls, "elements");
        assertEquals(2, elements.size(), "tags[2] and points[1] are null");
        assertEquals(8, field((DynamicMessage) elements.get(0), "field"));
        assertEquals(List.of(2), field((DynamicMessage) elements.get(0), "positions"));
        Values.assertSameRecord(full.getRecord(), ((EchoRecord) roundTrip("echoRecord", full)).getRecord());

        EchoRecord empty = new EchoRecord();
        empty.setRecord(Values.emptyRecord());
        DynamicMessage e = (DynamicMessage) field(exact("echoRecord", empty), "record");
        assertFalse(has(e, "name"), "null string: absent");
        assertTrue(has(e, "data"), "empty bytes: present");
        assertFalse(has(e, "sb_nulls"));
        Values.assertSameRecord(empty.getRecord(), ((EchoRecord) roundTrip("echoRecord", empty)).getRecord());

        EchoRecord absent = new EchoRecord();
        assertEquals(0, CODEC.toBytes("echoRecord", absent, 10).length);
        assertNull(((EchoRecord) roundTrip("echoRecord", absent)).getRecord());
    }

    @Test
    void tensors() throws Exception {
        EchoTensor t = new EchoTensor();
        t.setTensor(Tensor.of(new double[][] {{1, -0.0, 3}, {Double.NaN, 5, Double.NEGATIVE_INFINITY}}));
        DynamicMessage m = (DynamicMessage) field(exact("echoTensor", t), "tensor");
        assertEquals(List.of(2, 3), field(m, "shape"));
        assertEquals(6, ((List<?>) field(m, "values")).size());
        Values.assertSameTensor(t.getTensor(), ((EchoTensor) roundTrip("echoTensor", t)).getTensor());

        EchoIntTensor it = new EchoIntTensor();
        IntTensor ints = new IntTensor();
        ints.setShape(new int[] {2, 0});
        ints.setValues(new int[0]);
        it.setTensor(ints);
        exact("echoIntTensor", it);
        IntTensor back = ((EchoIntTensor) roundTrip("echoIntTensor", it)).getTensor();
        assertArrayEquals(new int[] {2, 0}, back.getShape());
        assertEquals(0, back.getValues().length);

        Tensor ragged = new Tensor();
        ragged.setShape(new int[] {2, 2});
        ragged.setValues(new double[3]);
        EchoTensor bad = new EchoTensor();
        bad.setTensor(ragged);
        assertEquals("Tensor", assertThrows(WireFormatException.class, () -> CODEC.writer("echoTensor", bad, 10)).field());
    }

    @Test
    void heterogeneousLists() throws Exception {
        EchoMixed v = new EchoMixed();
        v.setList(Values.mixedOfEveryKind());
        v.setMore(new ArrayList<>(Arrays.asList(Mixed.of(), null, Values.nested(64))));
        DynamicMessage m = exact("echoMixed", v);
        DynamicMessage list = (DynamicMessage) field(m, "list");
        List<?> elements = (List<?>) field(list, "elements");
        assertEquals(v.getList().getItems().size(), elements.size());
        DynamicMessage first = (DynamicMessage) elements.get(0);
        assertEquals(1.5, field(first, "number"), "the first alternative of the oneof");
        EchoMixed back = (EchoMixed) roundTrip("echoMixed", v);
        Values.assertSameMixed(v.getList(), back.getList());
        assertEquals(3, back.getMore().size());
        assertNull(back.getMore().get(1));
        Values.assertSameMixed(v.getMore().get(2), back.getMore().get(2));

        EchoMixed deep = new EchoMixed();
        deep.setList(Values.nested(65));
        WireFormatException e = assertThrows(WireFormatException.class, () -> CODEC.writer("echoMixed", deep, 10));
        assertEquals(WireFormatException.DEPTH_LIMIT, e.reason());
    }

    @Test
    void linkedListsWithCyclesAndSharedNodes() throws Exception {
        EchoList v = new EchoList();
        LinkEntry head = Values.list(5);
        LinkEntry last = head;
        while (last.getNextLink() != null) {
            last = last.getNextLink();
        }
        last.setNextLink(head.getNextLink()); // a cycle back to the second node
        v.setHead(head);
        DynamicMessage m = exact("echoList", v);
        assertEquals(1, field(m, "head"), "the head is node 1");
        List<?> nodes = (List<?>) field(m, "sb_nodes");
        assertEquals(5, nodes.size());
        assertEquals(2, field((DynamicMessage) nodes.get(4), "nextLink"), "the last node refers back to node 2");
        EchoList back = (EchoList) roundTrip("echoList", v);
        LinkEntry b = back.getHead();
        LinkEntry second = b.getNextLink();
        LinkEntry end = second.getNextLink().getNextLink().getNextLink();
        assertSame(second, end.getNextLink(), "the cycle keeps its shape");
        assertEquals(head.getSstring(), b.getSstring());
        assertEquals(Double.doubleToRawLongBits(-0.0), Double.doubleToRawLongBits(second.getDdouble()));
    }

    /** The arrays a large message grew are kept for the next one: nothing of one message reaches the next. */
    @Test
    void messagesAfterALargeOneReadAndWriteAsAlone() throws Exception {
        for (int n : new int[] {5000, 40, 3000, 7, 5000}) {
            EchoList v = new EchoList();
            v.setHead(Values.list(n));
            exact("echoList", v); // the bytes protobuf-java writes for this message alone
            EchoList back = (EchoList) roundTrip("echoList", v);
            Values.assertSameList(v.getHead(), back.getHead());
            // a writer given up after its first part keeps its arrays; the next message is unaffected
            ProtoCodec.Writer abandoned = CODEC.writer("echoList", v, 1_000_000);
            abandoned.writePart(new ProtoOutput(64), 64);
        }
    }

    @Test
    void millionNodesWithoutRecursion() {
        EchoList v = new EchoList();
        v.setHead(Values.list(1_000_000));
        ProtoCodec.Writer w = CODEC.writer("echoList", v, 1_000_000);
        List<byte[]> parts = new ArrayList<>();
        ProtoOutput out = new ProtoOutput(1 << 20);
        do {
            out.reset();
            w.writePart(out, ProtoCodec.PART_BYTES);
            parts.add(out.toByteArray());
        } while (w.hasMore());
        assertTrue(parts.size() > 10, "cut into parts: " + parts.size());
        EchoList back = (EchoList) readParts("echoList", parts);
        Values.assertSameList(v.getHead(), back.getHead());
        assertEquals(WireFormatException.NODE_LIMIT,
                assertThrows(WireFormatException.class, () -> CODEC.writer("echoList", v, 999_999)).reason());
        ProtoCodec.Reader r = CODEC.reader("echoList", MessageLimits.of(1L << 31, 1000), -1);
        WireFormatException e = assertThrows(WireFormatException.class, () -> {
            for (byte[] p : parts) {
                r.readPart(p, 0, p.length);
            }
        });
        assertEquals(WireFormatException.NODE_LIMIT, e.reason());
    }

    @Test
    void declaredFaultAndScalars() throws Exception {
        DivideFault f = new DivideFault();
        f.setReason("division by zero");
        f.setDividend(Long.MIN_VALUE);
        DynamicMessage m = exact("divideFault", f);
        assertEquals("division by zero", field(m, "reason"));
        assertEquals(Long.MIN_VALUE, field(m, "dividend"));
        DivideFault back = (DivideFault) roundTrip("divideFault", f);
        assertEquals(Long.MIN_VALUE, back.getDividend());
        DivideFault noReason = new DivideFault();
        assertEquals("divideFault.reason", assertThrows(WireFormatException.class,
                () -> CODEC.writer("divideFault", noReason, 10)).field());
        assertEquals(0, CODEC.toBytes("ping", new Ping(), 10).length);
    }

    @Test
    void readsWhatProtobufJavaWrites() throws Exception {
        // packed as protobuf-java writes it, then the same values unpacked, merged with another part
        DynamicMessage packed = DynamicMessage.newBuilder(type("spin"))
                .addRepeatedField(type("spin").findFieldByName("values"), 1.5)
                .addRepeatedField(type("spin").findFieldByName("values"), -0.0)
                .setField(type("spin").findFieldByName("maxRounds"), 7).build();
        Spin s = (Spin) CODEC.fromBytes("spin", packed.toByteArray(), LIMITS);
        Values.assertSameDoubles(new double[] {1.5, -0.0}, s.getValues());
        assertEquals(7, s.getMaxRounds());
        ByteArrayOutputStream unpacked = new ByteArrayOutputStream();
        CodedOutputStream c = CodedOutputStream.newInstance(unpacked);
        c.writeDouble(1, 3.0);
        c.writeDouble(1, Double.NaN);
        c.flush();
        Spin merged = (Spin) readParts("spin", List.of(packed.toByteArray(), unpacked.toByteArray()));
        Values.assertSameDoubles(new double[] {1.5, -0.0, 3.0, Double.NaN}, merged.getValues());

        Descriptor rec = type("Record");
        FieldDescriptor points = rec.findFieldByName("points");
        DynamicMessage record = DynamicMessage.newBuilder(rec)
                .setField(rec.findFieldByName("name"), "n")
                .setField(rec.findFieldByName("small"), -5)
                .addRepeatedField(rec.findFieldByName("tags"), "t")
                .addRepeatedField(points, DynamicMessage.newBuilder(type("Point"))
                        .setField(type("Point").findFieldByName("x"), 2.0).build())
                .build();
        DynamicMessage echo = DynamicMessage.newBuilder(type("echoRecord"))
                .setField(type("echoRecord").findFieldByName("record"), record).build();
        Record r = ((EchoRecord) CODEC.fromBytes("echoRecord", echo.toByteArray(), LIMITS)).getRecord();
        assertEquals("n", r.getName());
        assertEquals(-5, r.getSmall());
        assertEquals(List.of("t"), r.getTags());
        assertEquals(2.0, r.getPoints().get(0).getX());
        assertEquals(0, r.getInts().length, "absent repeated: empty, not null");
        assertNull(r.getWhen());
    }

    @Test
    void malformedInputIsRefusedByName() {
        EchoRecord full = new EchoRecord();
        full.setRecord(Values.fullRecord());
        byte[] bytes = CODEC.toBytes("echoRecord", full, 10);
        for (int cut = 1; cut < bytes.length; cut++) {
            byte[] truncated = Arrays.copyOf(bytes, cut);
            WireFormatException e = assertThrows(WireFormatException.class,
                    () -> CODEC.fromBytes("echoRecord", truncated, LIMITS), "cut at " + cut);
            assertEquals(WireFormatException.MALFORMED, e.reason());
            assertTrue(e.field() != null && e.field().startsWith("echoRecord.record"), "named: " + e.field());
        }
        // a byte of 300
        Descriptor rec = type("Record");
        DynamicMessage big = DynamicMessage.newBuilder(rec).setField(rec.findFieldByName("small"), 300).build();
        DynamicMessage echo = DynamicMessage.newBuilder(type("echoRecord"))
                .setField(type("echoRecord").findFieldByName("record"), big).build();
        assertEquals("Record.small", assertThrows(WireFormatException.class,
                () -> CODEC.fromBytes("echoRecord", echo.toByteArray(), LIMITS)).field());
        // a node number past the table
        Descriptor list = type("echoList");
        DynamicMessage dangling = DynamicMessage.newBuilder(list).setField(list.findFieldByName("head"), 3)
                .addRepeatedField(list.findFieldByName("sb_nodes"), DynamicMessage.getDefaultInstance(type("LinkEntry")))
                .build();
        WireFormatException e = assertThrows(WireFormatException.class,
                () -> CODEC.fromBytes("echoList", dangling.toByteArray(), LIMITS));
        assertEquals("echoList.head", e.field());
        // a list element with no alternative set
        Descriptor mixed = type("Mixed");
        DynamicMessage unset = DynamicMessage.newBuilder(mixed).addRepeatedField(mixed.findFieldByName("elements"),
                DynamicMessage.getDefaultInstance(mixed.findNestedTypeByName("Element"))).build();
        DynamicMessage echoMixed = DynamicMessage.newBuilder(type("echoMixed"))
                .setField(type("echoMixed").findFieldByName("list"), unset).build();
        assertEquals("Mixed.elements", assertThrows(WireFormatException.class,
                () -> CODEC.fromBytes("echoMixed", echoMixed.toByteArray(), LIMITS)).field());
        // too deep, too large
        EchoMixed deep = new EchoMixed();
        deep.setList(Values.nested(64));
        byte[] deepBytes = CODEC.toBytes("echoMixed", deep, 10);
        assertEquals(WireFormatException.DEPTH_LIMIT, assertThrows(WireFormatException.class,
                () -> CODEC.fromBytes("echoMixed", deepBytes, new MessageLimits(1 << 20, 10, 1 << 20, 10))).reason());
        assertEquals(WireFormatException.SIZE_LIMIT, assertThrows(WireFormatException.class,
                () -> CODEC.fromBytes("echoRecord", bytes, MessageLimits.of(10, 10))).reason());
        // bad UTF-8 in a string
        byte[] badUtf8 = {0x0A, 0x03, 0x0A, 0x01, (byte) 0xFF};
        assertEquals("Record.name", assertThrows(WireFormatException.class,
                () -> CODEC.fromBytes("echoRecord", badUtf8, LIMITS)).field());
    }
}
