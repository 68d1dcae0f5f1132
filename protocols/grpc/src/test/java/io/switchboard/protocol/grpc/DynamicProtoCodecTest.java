package io.switchboard.protocol.grpc;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.google.protobuf.ByteString;
import com.google.protobuf.DescriptorProtos.FileDescriptorSet;
import com.google.protobuf.Descriptors.Descriptor;
import com.google.protobuf.Descriptors.FieldDescriptor;
import com.google.protobuf.Descriptors.FileDescriptor;
import com.google.protobuf.DynamicMessage;
import io.switchboard.codec.message.MessageLimits;
import io.switchboard.codec.message.WireFormatException;
import io.switchboard.codec.dynamic.DynamicInterface;
import io.switchboard.codec.dynamic.DynamicList;
import io.switchboard.codec.dynamic.DynamicProtoCodec;
import io.switchboard.codec.dynamic.DynamicRecord;
import io.switchboard.codec.dynamic.DynamicType;
import io.switchboard.codec.proto.ProtoCodec;
import io.switchboard.codec.proto.ProtoOutput;
import io.switchboard.idl.runtime.HeterogeneousList;
import io.switchboard.testing.conformance.ConformanceComponent;
import io.switchboard.testing.conformance.EchoList;
import io.switchboard.testing.conformance.EchoMixed;
import io.switchboard.testing.conformance.EchoRecord;
import io.switchboard.testing.conformance.LinkEntry;
import io.switchboard.testing.conformance.Mixed;
import io.switchboard.testing.conformance.Record;
import io.switchboard.testing.conformance.Values;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.OffsetDateTime;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The dynamic codec of the typed protobuf wire against protobuf-java, with descriptors protoc
 * reads from the {@code .proto} the compiler emitted: for every shape of the conformance
 * component, it writes the generated codec's bytes, protobuf-java parses them and writes them
 * again byte for byte, and
 * the codec reads that back to exactly the values (compared by their bytes, which keep NaN
 * payloads, -0.0, nulls, sharing and cycles); messages built with
 * protobuf-java's own API read to the values they say; malformed and oversized input is refused
 * with a {@link WireFormatException}, never another exception.
 */
class DynamicProtoCodecTest {
    private static final int MAX_NODES = 2_000_000;
    private static final MessageLimits LIMITS = MessageLimits.of(256 << 20, MAX_NODES);
    private static FileDescriptor file;

    private final DynamicInterface dynamic = DynamicInterface.fromSchema(ConformanceComponent.DESCRIPTOR.schema());
    private final DynamicProtoCodec codec = dynamic.protoCodec();
    private final ProtoCodec generatedProto = ConformanceComponent.DESCRIPTOR.codec(ProtoCodec.class);

    /** The descriptors protoc builds from the emitted Conformance.proto. */
    @BeforeAll
    static void protoc(@TempDir Path dir) throws Exception {
        String text;
        try (InputStream in = ConformanceComponent.class.getResourceAsStream("Conformance.proto")) {
            text = new String(in.readAllBytes(), StandardCharsets.UTF_8);
        }
        Path protoc = Path.of(System.getProperty("switchboard.protoc", "target/protoc/protoc.exe"));
        assertTrue(Files.exists(protoc), "the build copies protoc to " + protoc);
        protoc.toFile().setExecutable(true);
        Files.writeString(dir.resolve("Conformance.proto"), text);
        Process p = new ProcessBuilder(protoc.toString(), "--proto_path=" + dir, "--descriptor_set_out="
                + dir.resolve("set.pb"), "Conformance.proto").redirectErrorStream(true).start();
        String messages = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
        assertTrue(p.waitFor(60, TimeUnit.SECONDS), "protoc ends");
        assertEquals(0, p.exitValue(), messages);
        file = FileDescriptor.buildFrom(FileDescriptorSet.parseFrom(Files.readAllBytes(dir.resolve("set.pb"))).getFile(0),
                new FileDescriptor[0]);
    }

    private static Descriptor message(String name) {
        return file.findMessageTypeByName(name);
    }

    private static List<Object[]> messages() {
        return Values.messageShapes();
    }

    /** The record of a bean's values: written by the generated codec, read by the dynamic one (exact to the bit). */
    private DynamicRecord record(String element, Object bean) {
        return codec.fromBytes(element, generatedProto.toBytes(element, bean, MAX_NODES), MessageLimits.unlimited());
    }

    /** A record's values as bytes, to compare two records by (node order, field order and bits all count). */
    private byte[] values(DynamicRecord r) {
        return codec.toBytes(r, MAX_NODES);
    }

    @Test
    void protobufJavaParsesWhatTheCodecWritesAndTheCodecReadsProtobufJavasBytes() throws Exception {
        for (Object[] m : messages()) {
            String element = (String) m[0];
            DynamicRecord record = record(element, m[1]);
            byte[] ours = codec.toBytes(record, MAX_NODES);
            assertEquals(ours.length, codec.writer(element, record, MAX_NODES).size(), element + ": the size pass");
            assertArrayEquals(generatedProto.toBytes(element, m[1], MAX_NODES), ours,
                    element + ": the generated codec writes other bytes");
            assertArrayEquals(values(record), values(record(element, generatedProto.fromBytes(element, ours, LIMITS))),
                    element + ": the generated codec reads other values");
            // a list level is two messages (the list, its Element): 64 levels pass protobuf's default limit of 100
            com.google.protobuf.CodedInputStream in = com.google.protobuf.CodedInputStream.newInstance(ours);
            in.setRecursionLimit(1000);
            DynamicMessage parsed = DynamicMessage.parseFrom(message(element), in);
            assertTrue(parsed.getUnknownFields().asMap().isEmpty(), element + ": every field is in the .proto");
            byte[] theirs = parsed.toByteArray();
            assertArrayEquals(ours, theirs, element + ": protobuf-java writes the same message in other bytes");
            DynamicRecord back = codec.fromBytes(element, theirs, LIMITS);
            assertArrayEquals(values(record), values(back), element + ": the values read back differ");
        }
    }

    /** Protobuf merges parts: any cut between top-level fields, read as parts, is the same message. */
    @Test
    void partsCutAnywhereBetweenFieldsMergeToTheMessage() throws Exception {
        Record full = Values.fullRecord();
        EchoRecord e = new EchoRecord();
        e.setRecord(full);
        LinkEntry cycle = Values.list(5);
        cycle.getNextLink().getNextLink().getNextLink().getNextLink().setNextLink(cycle);
        EchoList l = new EchoList();
        l.setHead(cycle);
        EchoMixed mixed = new EchoMixed();
        mixed.setList(Values.mixedOfEveryKind());
        mixed.setMore(new ArrayList<>(List.of(Mixed.of(), Mixed.of("y"))));
        for (Object[] m : new Object[][] {{"echoRecord", e}, {"echoList", l}, {"echoMixed", mixed}}) {
            DynamicRecord record = record((String) m[0], m[1]);
            byte[] bytes = codec.toBytes(record, MAX_NODES);
            List<Integer> cuts = fieldBoundaries(message((String) m[0]), bytes);
            for (int cut : cuts) {
                DynamicProtoCodec.Reader r = codec.reader((String) m[0], LIMITS, -1);
                r.readPart(bytes, 0, cut);
                r.readPart(bytes, cut, bytes.length);
                assertArrayEquals(values(record), values((DynamicRecord) r.finish()), m[0] + " cut at " + cut);
            }
        }
    }

    /** Written in parts of every size from a few bytes up: protobuf's merge of the parts is the message, and so is ours. */
    @Test
    void writtenInPartsEveryShapeMergesBackToTheMessage() throws Exception {
        for (Object[] m : messages()) {
            String element = (String) m[0];
            DynamicRecord record = record(element, m[1]);
            byte[] whole = codec.toBytes(record, MAX_NODES);
            for (int target : new int[] {1, 7, 64, 1000, 1 << 20}) {
                ProtoCodec.Writer w = codec.writer(element, record, MAX_NODES);
                DynamicProtoCodec.Reader r = codec.reader(element, LIMITS, w.size());
                com.google.protobuf.Message.Builder merged = DynamicMessage.newBuilder(message(element));
                int parts = 0;
                do {
                    ProtoOutput out = new ProtoOutput(16);
                    w.writePart(out, target);
                    byte[] part = out.toByteArray();
                    assertTrue(parts == 0 || part.length > 0, element + ": no empty part after the first");
                    r.readPart(part, 0, part.length);
                    com.google.protobuf.CodedInputStream in = com.google.protobuf.CodedInputStream.newInstance(part);
                    in.setRecursionLimit(1000);
                    merged.mergeFrom(in);
                    parts++;
                } while (w.hasMore());
                assertArrayEquals(values(record), values((DynamicRecord) r.finish()), element + " in parts of " + target);
                assertArrayEquals(whole, merged.build().toByteArray(), element + ": protobuf's merge of parts of " + target);
                if (target >= whole.length) {
                    assertEquals(1, parts, element + ": one part when it fits");
                }
            }
        }
    }

    private static List<Integer> fieldBoundaries(Descriptor d, byte[] bytes) throws Exception {
        List<Integer> cuts = new ArrayList<>();
        com.google.protobuf.CodedInputStream in = com.google.protobuf.CodedInputStream.newInstance(bytes);
        while (!in.isAtEnd()) {
            in.skipField(in.readTag());
            cuts.add(in.getTotalBytesRead());
        }
        return cuts;
    }

    @Test
    void messagesBuiltWithProtobufJavaReadToTheirValues() throws Exception {
        // edge doubles, bit for bit, in a packed field protobuf-java wrote
        Descriptor doubles = message("echoDoubles");
        DynamicMessage.Builder d = DynamicMessage.newBuilder(doubles);
        FieldDescriptor values = doubles.findFieldByName("values");
        for (double v : Values.EDGE_DOUBLES) {
            d.addRepeatedField(values, v);
        }
        DynamicRecord r = codec.fromBytes("echoDoubles", d.build().toByteArray(), LIMITS);
        Values.assertSameDoubles(Values.EDGE_DOUBLES, (double[]) r.get("values"));

        // a list of three nodes whose last points back to the second: node numbers from 1, 0 = null
        Descriptor echoList = message("echoList");
        Descriptor entry = message("LinkEntry");
        DynamicMessage.Builder list = DynamicMessage.newBuilder(echoList)
                .setField(echoList.findFieldByName("head"), 1);
        for (int i = 0; i < 3; i++) {
            list.addRepeatedField(echoList.findFieldByName("sb_nodes"), DynamicMessage.newBuilder(entry)
                    .setField(entry.findFieldByName("llong"), (long) i).setField(entry.findFieldByName("ddouble"), -0.0)
                    .setField(entry.findFieldByName("sstring"), "n" + i)
                    .setField(entry.findFieldByName("nextLink"), i == 2 ? 2 : i + 2).build());
        }
        DynamicRecord head = (DynamicRecord) codec.fromBytes("echoList", list.build().toByteArray(), LIMITS).get("head");
        DynamicRecord second = (DynamicRecord) head.get("nextLink");
        DynamicRecord third = (DynamicRecord) second.get("nextLink");
        assertSame(second, third.get("nextLink"), "the cycle is the same node, not a copy");
        assertEquals("n2", third.get("sstring"));
        assertEquals(2L, third.get("llong"));
        assertEquals(0, (Integer) third.get("iint"), "an absent required int is 0");
        assertEquals(Double.doubleToRawLongBits(-0.0), Double.doubleToRawLongBits((Double) head.get("ddouble")));

        // a record: optional absent is null, set-and-empty is empty, null elements and null lists by sb_nulls
        Descriptor record = message("Record");
        Descriptor nulls = message("Nulls");
        Descriptor elements = nulls.findNestedTypeByName("Elements");
        Descriptor point = message("Point");
        Descriptor dateTime = message("DateTime");
        FieldDescriptor tags = record.findFieldByName("tags");
        DynamicMessage rec = DynamicMessage.newBuilder(record)
                .setField(record.findFieldByName("name"), "")
                .setField(record.findFieldByName("small"), -128)
                .setField(record.findFieldByName("when"), DynamicMessage.newBuilder(dateTime)
                        .setField(dateTime.findFieldByName("seconds"), 1_800_000_000L)
                        .setField(dateTime.findFieldByName("nanos"), 5)
                        .setField(dateTime.findFieldByName("offset_seconds"), -(9 * 3600 + 30 * 60)).build())
                .addRepeatedField(tags, "a").addRepeatedField(tags, "").addRepeatedField(tags, "c")
                .addRepeatedField(record.findFieldByName("points"), DynamicMessage.newBuilder(point).build())
                .setField(record.findFieldByName("sb_nulls"), DynamicMessage.newBuilder(nulls)
                        .addRepeatedField(nulls.findFieldByName("lists"), record.findFieldByName("ints").getNumber())
                        .addRepeatedField(nulls.findFieldByName("elements"), DynamicMessage.newBuilder(elements)
                                .setField(elements.findFieldByName("field"), tags.getNumber())
                                .addRepeatedField(elements.findFieldByName("positions"), 1).build()).build())
                .build();
        Descriptor echoRecord = message("echoRecord");
        byte[] bytes = DynamicMessage.newBuilder(echoRecord).setField(echoRecord.findFieldByName("record"), rec).build()
                .toByteArray();
        DynamicRecord got = (DynamicRecord) codec.fromBytes("echoRecord", bytes, LIMITS).get("record");
        assertEquals("", got.get("name"));
        assertNull(got.get("count"));
        assertNull(got.get("data"));
        assertNull(got.get("ratio"), "nillable float absent: null");
        assertEquals((byte) -128, got.get("small"));
        assertEquals(OffsetDateTime.parse("2027-01-14T22:30:00.000000005-09:30"), got.get("when"));
        assertEquals(Arrays.asList("a", null, "c"), got.get("tags"));
        assertNull(got.get("ints"), "listed as null");
        assertArrayEquals(new long[0], (long[]) got.get("longs"), "absent: empty");
        assertEquals(1, ((List<?>) got.get("points")).size());
        assertEquals(0.0, ((DynamicRecord) ((List<?>) got.get("points")).get(0)).get("x"));

        // a heterogeneous list: each element's oneof says its alternative; lists nest
        Descriptor mixed = message("Mixed");
        Descriptor element = mixed.findNestedTypeByName("Element");
        FieldDescriptor elementsField = mixed.findFieldByName("elements");
        DynamicMessage inner = DynamicMessage.newBuilder(mixed).addRepeatedField(elementsField,
                DynamicMessage.newBuilder(element).setField(element.findFieldByName("text"), "").build()).build();
        DynamicMessage outer = DynamicMessage.newBuilder(mixed)
                .addRepeatedField(elementsField, DynamicMessage.newBuilder(element)
                        .setField(element.findFieldByName("number"), Double.NaN).build())
                .addRepeatedField(elementsField, DynamicMessage.newBuilder(element)
                        .setField(element.findFieldByName("integer"), 0L).build())
                .addRepeatedField(elementsField, DynamicMessage.newBuilder(element)
                        .setField(element.findFieldByName("bytes"), ByteString.copyFrom(new byte[] {-1})).build())
                .addRepeatedField(elementsField, DynamicMessage.newBuilder(element)
                        .setField(element.findFieldByName("list"), inner).build())
                .build();
        Descriptor echoMixed = message("echoMixed");
        DynamicList got2 = (DynamicList) codec.fromBytes("echoMixed", DynamicMessage.newBuilder(echoMixed)
                .setField(echoMixed.findFieldByName("list"), outer).build().toByteArray(), LIMITS).get("list");
        assertEquals(4, got2.size());
        assertTrue(Double.isNaN((Double) got2.get(0)));
        assertEquals(0L, got2.get(1));
        assertEquals("integer", got2.alternative(1));
        assertArrayEquals(new byte[] {-1}, (byte[]) got2.get(2));
        assertEquals(List.of(""), got2.get(3));
        assertEquals("list", got2.alternative(3));
    }

    /** A million linked nodes go out and come back without recursion; a cycle through all of them too. */
    @Test
    void aMillionNodesTravelWithoutRecursion() {
        DynamicType entry = dynamic.type("LinkEntry");
        int n = 1_000_000;
        DynamicRecord head = null;
        DynamicRecord last = null;
        for (int i = n - 1; i >= 0; i--) {
            DynamicRecord e = entry.newRecord().set("llong", (long) i).set("sshort", (short) i).set("iint", i)
                    .set("ffloat", (float) i).set("ddouble", (double) i);
            e.set("nextLink", head);
            head = e;
            last = last == null ? e : last;
        }
        last.set("nextLink", head);
        byte[] bytes = codec.toBytes(dynamic.request("echoList").set("head", head), MAX_NODES);
        DynamicRecord back = (DynamicRecord) codec.fromBytes("echoList", bytes, LIMITS).get("head");
        DynamicRecord p = back;
        for (int i = 0; i < n; i++) {
            assertEquals((long) i, p.get("llong"));
            p = (DynamicRecord) p.get("nextLink");
        }
        assertSame(back, p, "the last node leads back to the first");
    }

    @Test
    void aLaterOccurrenceOfASingleReferenceWinsInBothReadersNullOrNot() {
        EchoList list = new EchoList();
        list.setHead(Values.list(2));
        byte[] withHead = generatedProto.toBytes("echoList", list, MAX_NODES);
        byte[] headNull = {0x08, 0x00};   // field 1 (head), node number 0: null
        for (ProtoCodec c : new ProtoCodec[] {generatedProto, codec}) {
            Object nulled = readParts(c, withHead, headNull);
            Object head = nulled instanceof EchoList g ? g.getHead() : ((DynamicRecord) nulled).get("head");
            assertNull(head, c.getClass().getSimpleName() + ": the later null did not win");
            Object set = readParts(c, headNull, withHead);
            head = set instanceof EchoList g ? g.getHead() : ((DynamicRecord) set).get("head");
            assertTrue(head != null, c.getClass().getSimpleName() + ": the later node did not win");
        }
    }

    private static Object readParts(ProtoCodec c, byte[]... parts) {
        ProtoCodec.Reader r = c.reader("echoList", LIMITS, -1);
        for (byte[] part : parts) {
            r.readPart(part, 0, part.length);
        }
        return r.finish();
    }

    @Test
    void moreNodesThanTheLimitAreRefusedBothWays() {
        EchoList list = new EchoList();
        list.setHead(Values.list(1_000));
        DynamicRecord record = record("echoList", list);
        byte[] bytes = codec.toBytes(record, 1_000);
        WireFormatException tooMany = assertThrows(WireFormatException.class,
                () -> codec.fromBytes("echoList", bytes, MessageLimits.of(1 << 20, 999)));
        assertEquals(WireFormatException.NODE_LIMIT, tooMany.reason());
        assertEquals(WireFormatException.NODE_LIMIT, assertThrows(WireFormatException.class,
                () -> codec.toBytes(record, 999)).reason());
    }

    /** Contradictions in sb_nulls, which the generated and the dynamic reader once took differently: both refuse them. */
    @Test
    void contradictoryNullsAreRefusedByBothReaders() {
        byte[] one = new byte[8];
        java.nio.ByteBuffer.wrap(one).order(java.nio.ByteOrder.LITTLE_ENDIAN).putDouble(1.0);
        // values = [1.0], and sb_nulls (field 2047) saying values is null
        byte[] listedNull = concat(new byte[] {0x0A, 8}, one, new byte[] {(byte) 0xFA, 0x7F, 2, 0x08, 1});
        // sb_nulls.elements whose field number comes as a fixed64
        byte[] wrongWireType = concat(new byte[] {(byte) 0xFA, 0x7F, 11, 0x12, 9, 0x09}, one);
        for (ProtoCodec reader : List.<ProtoCodec>of(generatedProto, codec)) {
            WireFormatException e = assertThrows(WireFormatException.class,
                    () -> reader.fromBytes("echoDoubles", listedNull, LIMITS));
            assertEquals("echoDoubles.values", e.field(), e.getMessage());
            assertTrue(e.getMessage().contains("listed as null in sb_nulls, but it holds elements"), e.getMessage());
            e = assertThrows(WireFormatException.class, () -> reader.fromBytes("echoDoubles", wrongWireType, LIMITS));
            assertTrue(e.getMessage().contains("sb_nulls.elements.field"), e.getMessage());
        }
    }

    private static byte[] concat(byte[]... pieces) {
        java.io.ByteArrayOutputStream out = new java.io.ByteArrayOutputStream();
        for (byte[] p : pieces) {
            out.writeBytes(p);
        }
        return out.toByteArray();
    }

    @Test
    void malformedInputIsRefused() throws Exception {
        // every truncation of every shape: a refusal, never another exception (nor a silent success
        // where the cut falls inside a field)
        for (Object[] m : messages()) {
            String element = (String) m[0];
            byte[] bytes = codec.toBytes(record(element, m[1]), MAX_NODES);
            if (bytes.length > 3_000) {
                continue;
            }
            List<Integer> boundaries = fieldBoundaries(message(element), bytes);
            for (int cut = 0; cut < bytes.length; cut++) {
                byte[] part = Arrays.copyOf(bytes, cut);
                if (boundaries.contains(cut) || cut == 0) {
                    continue;   // a whole prefix of fields is a valid message (protobuf's merge rule)
                }
                assertThrows(WireFormatException.class, () -> codec.fromBytes(element, part, LIMITS),
                        element + " cut at " + cut);
            }
        }
        Descriptor echoList = message("echoList");
        Descriptor entry = message("LinkEntry");
        // a node number past the table
        byte[] outOfRange = DynamicMessage.newBuilder(echoList).setField(echoList.findFieldByName("head"), 2)
                .addRepeatedField(echoList.findFieldByName("sb_nodes"), DynamicMessage.newBuilder(entry).build())
                .build().toByteArray();
        WireFormatException e = assertThrows(WireFormatException.class,
                () -> codec.fromBytes("echoList", outOfRange, LIMITS));
        assertEquals(WireFormatException.MALFORMED, e.reason());
        assertTrue(e.getMessage().contains("is not in the node table"), e.getMessage());
        // a byte out of its range
        Descriptor record = message("Record");
        Descriptor echoRecord = message("echoRecord");
        byte[] bigByte = DynamicMessage.newBuilder(echoRecord).setField(echoRecord.findFieldByName("record"),
                DynamicMessage.newBuilder(record).setField(record.findFieldByName("small"), 300).build()).build()
                .toByteArray();
        assertTrue(assertThrows(WireFormatException.class, () -> codec.fromBytes("echoRecord", bigByte, LIMITS))
                .getMessage().contains("Record.small"));
        // an element of a heterogeneous list with none of its oneof set
        Descriptor mixed = message("Mixed");
        Descriptor echoMixed = message("echoMixed");
        byte[] unset = DynamicMessage.newBuilder(echoMixed).setField(echoMixed.findFieldByName("list"),
                DynamicMessage.newBuilder(mixed).addRepeatedField(mixed.findFieldByName("elements"),
                        DynamicMessage.newBuilder(mixed.findNestedTypeByName("Element")).build()).build()).build()
                .toByteArray();
        assertTrue(assertThrows(WireFormatException.class, () -> codec.fromBytes("echoMixed", unset, LIMITS))
                .getMessage().contains("no alternative set"));
        // lists nested one deeper than the limit
        DynamicMessage deep = DynamicMessage.newBuilder(mixed).build();
        for (int i = 0; i < HeterogeneousList.MAX_DEPTH; i++) {
            deep = DynamicMessage.newBuilder(mixed).addRepeatedField(mixed.findFieldByName("elements"),
                    DynamicMessage.newBuilder(mixed.findNestedTypeByName("Element"))
                            .setField(mixed.findNestedTypeByName("Element").findFieldByName("list"), deep).build()).build();
        }
        byte[] tooDeep = DynamicMessage.newBuilder(echoMixed).setField(echoMixed.findFieldByName("list"), deep).build()
                .toByteArray();
        assertEquals(WireFormatException.DEPTH_LIMIT, assertThrows(WireFormatException.class,
                () -> codec.fromBytes("echoMixed", tooDeep, LIMITS)).reason());
        // a required string absent; more bytes than the limit
        assertTrue(assertThrows(WireFormatException.class, () -> codec.fromBytes("divideFault", new byte[0], LIMITS))
                .getMessage().contains("divideFault.reason"));
        byte[] doubles = codec.toBytes(dynamic.request("echoDoubles").set("values", new double[1000]), 10);
        assertEquals(WireFormatException.SIZE_LIMIT, assertThrows(WireFormatException.class,
                () -> codec.fromBytes("echoDoubles", doubles, MessageLimits.of(1000, 10))).reason());
        // a length that lies: longer than what follows
        assertThrows(WireFormatException.class, () -> codec.fromBytes("echoDoubles",
                new byte[] {0x0a, (byte) 0xff, (byte) 0xff, (byte) 0xff, 0x7f, 0, 0}, LIMITS));
    }

    @Test
    void valuesThatCannotTravelAreRefusedBeforeAnythingIsWritten() {
        DynamicRecord fault = dynamic.message("divideFault").newRecord().set("dividend", 1L);
        assertTrue(assertThrows(WireFormatException.class, () -> codec.toBytes(fault, 10)).getMessage()
                .contains("divideFault.reason"));
        DynamicRecord tensor = dynamic.type("Tensor").newRecord().set("shape", new int[] {2, 2})
                .set("values", new double[3]);
        assertThrows(WireFormatException.class,
                () -> codec.toBytes(dynamic.request("echoTensor").set("tensor", tensor), 10));
        DynamicType mixed = dynamic.type("Mixed");
        DynamicList deep = mixed.newList();
        for (int i = 0; i < HeterogeneousList.MAX_DEPTH; i++) {
            deep = mixed.newList(deep);
        }
        DynamicList tooDeep = deep;
        assertEquals(WireFormatException.DEPTH_LIMIT, assertThrows(WireFormatException.class,
                () -> codec.toBytes(dynamic.request("echoMixed").set("list", tooDeep), 10)).reason());
        assertThrows(IllegalArgumentException.class, () -> codec.toBytes(dynamic.type("Point").newRecord(), 10));
    }
}
