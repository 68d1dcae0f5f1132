package io.switchboard.testing.conformance;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.switchboard.codec.XmlCodec;
import io.switchboard.codec.XmlMessages;
import io.switchboard.codec.binary.BinaryCodec;
import io.switchboard.codec.binary.BinaryLimits;
import io.switchboard.codec.binary.BinaryReader;
import io.switchboard.codec.binary.BinaryWriter;
import io.switchboard.codec.binary.WireFormatException;
import io.switchboard.codec.dynamic.DynamicInterface;
import io.switchboard.codec.dynamic.DynamicList;
import io.switchboard.codec.dynamic.DynamicRecord;
import io.switchboard.codec.dynamic.DynamicType;
import jakarta.xml.bind.JAXBException;
import java.io.StringReader;
import java.io.StringWriter;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import javax.xml.stream.XMLInputFactory;
import javax.xml.stream.XMLOutputFactory;
import javax.xml.stream.XMLStreamReader;
import javax.xml.stream.XMLStreamWriter;
import org.junit.jupiter.api.Test;

/**
 * The model-driven codecs of an interface read at run time write exactly the bytes of the
 * generated codecs, in both wire forms, for every shape the conformance component has (edge
 * doubles, empty and null arrays, records with every field set, empty or absent, nil list items,
 * n-d arrays, long lists, cycles, shared nodes, faults, heterogeneous lists of every alternative,
 * nested to the depth limit); and what one side writes the other reads
 * back to the same values.
 */
class DynamicCodecsTest {
    private static final int MAX_NODES = 2_000_000;
    private final DynamicInterface dynamic = DynamicInterface.fromSchema(ConformanceComponent.DESCRIPTOR.schema());
    private final BinaryCodec generatedBinary = ConformanceComponent.DESCRIPTOR.codec(BinaryCodec.class);
    private final BinaryCodec dynamicBinary = dynamic.descriptor().codec(BinaryCodec.class);
    private final XmlMessages generatedXml = new XmlMessages(ConformanceComponent.DESCRIPTOR, MAX_NODES);
    private final XmlCodec dynamicXml = XmlCodec.of(dynamic.descriptor(), MAX_NODES);

    /** Every message shape of the conformance suite, as generated beans, with the element each one is. */
    private static List<Object[]> messages() {
        List<Object[]> m = new ArrayList<>();
        for (double[] values : new double[][] {Values.EDGE_DOUBLES.clone(), new double[0], null, new double[5_000]}) {
            EchoDoubles d = new EchoDoubles();
            d.setValues(values);
            m.add(new Object[] {"echoDoubles", d});
        }
        for (Record r : new Record[] {Values.fullRecord(), Values.emptyRecord(), new Record(), null}) {
            EchoRecord e = new EchoRecord();
            e.setRecord(r);
            m.add(new Object[] {"echoRecord", e});
            EchoSharedResponse s = new EchoSharedResponse();
            s.setRecord(r);
            m.add(new Object[] {"echoSharedResponse", s});
        }
        LinkEntry cycle = Values.list(4);
        cycle.getNextLink().getNextLink().getNextLink().setNextLink(cycle.getNextLink());
        for (LinkEntry head : new LinkEntry[] {Values.list(1_000), cycle, null}) {
            EchoList l = new EchoList();
            l.setHead(head);
            m.add(new Object[] {"echoList", l});
            EchoListResponse r = new EchoListResponse();
            r.setHead(head);
            m.add(new Object[] {"echoListResponse", r});
        }
        m.add(new Object[] {"ping", new Ping()});
        Divide divide = new Divide();
        divide.setDividend(Long.MIN_VALUE);
        divide.setDivisor(-1);
        m.add(new Object[] {"divide", divide});
        DivideFault fault = new DivideFault();
        fault.setReason("<division> & \"zero\" \uD83D\uDE00");
        fault.setDividend(7);
        m.add(new Object[] {"divideFault", fault});
        EchoTensor t = new EchoTensor();
        t.setTensor(Tensor.of(new double[][] {{1, -0.0}, {Double.NaN, Double.NEGATIVE_INFINITY}, {5, 6}}));
        m.add(new Object[] {"echoTensor", t});
        EchoIntTensor it = new EchoIntTensor();
        it.setTensor(IntTensor.of(new int[] {0, 3}, new int[0]));
        m.add(new Object[] {"echoIntTensor", it});
        // heterogeneous lists: every alternative, nested through lists and structs, empty, absent,
        // repeated, and nested to the depth limit
        Mixed every = Values.mixedOfEveryKind();
        Object[][] lists = {{every, null}, {Mixed.of(), null}, {null, null}, {null, new Mixed[0]},
            {Mixed.of(1L), new Mixed[] {Mixed.of(), every, Mixed.of("x")}},
            {Values.nested(io.switchboard.idl.runtime.HeterogeneousList.MAX_DEPTH), null}};
        for (Object[] l : lists) {
            List<Mixed> more = l[1] == null ? null : new ArrayList<>(Arrays.asList((Mixed[]) l[1]));
            EchoMixed request = new EchoMixed();
            request.setList((Mixed) l[0]);
            request.setMore(more);
            m.add(new Object[] {"echoMixed", request});
            EchoMixedResponse response = new EchoMixedResponse();
            response.setList((Mixed) l[0]);
            response.setMore(more);
            m.add(new Object[] {"echoMixedResponse", response});
        }
        return m;
    }

    @Test
    void binaryBytesAreTheGeneratedCodecsBytes() {
        for (Object[] m : messages()) {
            String element = (String) m[0];
            byte[] generated = BinaryWriter.toBytes(generatedBinary, m[1], MAX_NODES);
            DynamicRecord record = BinaryReader.fromBytes(dynamicBinary, generated, BinaryLimits.unlimited(), element,
                    DynamicRecord.class);
            assertEquals(element, record.type().name());
            byte[] again = BinaryWriter.toBytes(dynamicBinary, record, MAX_NODES);
            assertArrayEquals(generated, again, element + ": dynamic bytes differ from the generated codec's");
            // and the generated side reads what the dynamic side wrote
            Object back = BinaryReader.fromBytes(generatedBinary, again, BinaryLimits.unlimited(), m[1].getClass());
            assertArrayEquals(generated, BinaryWriter.toBytes(generatedBinary, back, MAX_NODES), element);
        }
    }

    @Test
    void xmlBytesAreTheGeneratedCodecsBytes() throws Exception {
        for (Object[] m : messages()) {
            String element = (String) m[0];
            String generated = generatedXml.toXml(m[1]);
            DynamicRecord record = read(dynamicXml, generated, DynamicRecord.class);
            assertEquals(element, record.type().name());
            String again = write(dynamicXml, record);
            assertEquals(generated, again, element + ": dynamic XML differs from JAXB's");
            Object back = generatedXml.fromXml(again, m[1].getClass());
            assertEquals(generated, generatedXml.toXml(back), element);
        }
    }

    /** Records built by hand, not decoded from generated bytes: the same bytes as beans of the same values. */
    @Test
    void handBuiltRecordsEncodeLikeBeansOfTheSameValues() throws Exception {
        EchoDoubles bean = new EchoDoubles();
        bean.setValues(Values.EDGE_DOUBLES.clone());
        DynamicRecord record = dynamic.request("echoDoubles").set("values", Values.EDGE_DOUBLES.clone());
        assertArrayEquals(BinaryWriter.toBytes(generatedBinary, bean, MAX_NODES),
                BinaryWriter.toBytes(dynamicBinary, record, MAX_NODES));
        assertEquals(generatedXml.toXml(bean), write(dynamicXml, record));

        // a 3-node list whose last node points back to the second, and a string that needs escaping
        LinkEntry a = Values.node(0);
        LinkEntry b = Values.node(1);
        LinkEntry c = Values.node(2);
        a.setNextLink(b);
        b.setNextLink(c);
        c.setNextLink(b);
        EchoList list = new EchoList();
        list.setHead(a);
        DynamicRecord[] nodes = new DynamicRecord[3];
        for (int i = 0; i < 3; i++) {
            LinkEntry e = Values.node(i);
            nodes[i] = dynamic.type("LinkEntry").newRecord().set("llong", e.getLlong()).set("sshort", e.getSshort())
                    .set("iint", e.getIint()).set("ffloat", e.getFfloat()).set("ddouble", e.getDdouble())
                    .set("sstring", e.getSstring());
        }
        nodes[0].set("nextLink", nodes[1]);
        nodes[1].set("nextLink", nodes[2]);
        nodes[2].set("nextLink", nodes[1]);
        DynamicRecord dynamicList = dynamic.request("echoList").set("head", nodes[0]);
        assertArrayEquals(BinaryWriter.toBytes(generatedBinary, list, MAX_NODES),
                BinaryWriter.toBytes(dynamicBinary, dynamicList, MAX_NODES));
        assertEquals(generatedXml.toXml(list), write(dynamicXml, dynamicList));
    }

    /** Heterogeneous lists built by hand as DynamicLists: the bytes of beans of the same values, in both forms. */
    @Test
    void handBuiltHeterogeneousListsEncodeLikeBeans() throws Exception {
        Point p = new Point();
        p.setX(-0.0);
        p.setY(Double.NaN);
        Labelled labelled = new Labelled();
        labelled.setLabel("l");
        labelled.setContent(Mixed.of(Mixed.of()));
        EchoMixed bean = new EchoMixed();
        bean.setList(Mixed.of(Double.NaN, -0.0, Long.MIN_VALUE, true, "", new byte[] {0, -1}, p, labelled,
                Mixed.of("x", Mixed.of())));
        bean.setMore(new ArrayList<>(List.of(Mixed.of(), Mixed.of(2L))));

        DynamicType mixed = dynamic.type("Mixed");
        DynamicRecord point = dynamic.type("Point").newRecord().set("x", -0.0).set("y", Double.NaN);
        DynamicRecord label = dynamic.type("Labelled").newRecord().set("label", "l")
                .set("content", mixed.newList(mixed.newList()));
        DynamicList list = mixed.newList(Double.NaN, -0.0, Long.MIN_VALUE, true, "", new byte[] {0, -1}, point, label,
                mixed.newList("x", mixed.newList()));
        DynamicRecord record = dynamic.request("echoMixed").set("list", list)
                .set("more", List.of(mixed.newList(), mixed.newList(2L)));
        assertArrayEquals(BinaryWriter.toBytes(generatedBinary, bean, MAX_NODES),
                BinaryWriter.toBytes(dynamicBinary, record, MAX_NODES));
        assertEquals(generatedXml.toXml(bean), write(dynamicXml, record));
        // each element says which alternative it is
        assertEquals(List.of("number", "number", "integer", "flag", "text", "bytes", "point", "labelled", "list"),
                java.util.stream.IntStream.range(0, list.size()).mapToObj(list::alternative).toList());

        // and what comes back is a DynamicList of the same elements, in both forms
        for (DynamicRecord back : new DynamicRecord[] {
            BinaryReader.fromBytes(dynamicBinary, BinaryWriter.toBytes(generatedBinary, bean, MAX_NODES),
                    BinaryLimits.unlimited(), "echoMixed", DynamicRecord.class),
            read(dynamicXml, generatedXml.toXml(bean), DynamicRecord.class)}) {
            DynamicList l = (DynamicList) back.get("list");
            assertSame(mixed, l.type());
            assertEquals(9, l.size());
            assertTrue(Double.isNaN((Double) l.get(0)));
            assertEquals(Double.doubleToRawLongBits(-0.0), Double.doubleToRawLongBits((Double) l.get(1)));
            assertEquals(Long.MIN_VALUE, l.get(2));
            assertEquals(Boolean.TRUE, l.get(3));
            assertEquals("", l.get(4));
            assertArrayEquals(new byte[] {0, -1}, (byte[]) l.get(5));
            assertEquals("Point", ((DynamicRecord) l.get(6)).type().name());
            DynamicList content = (DynamicList) ((DynamicRecord) l.get(7)).get("content");
            assertEquals(List.of(List.of()), content);
            assertEquals(List.of("x", List.of()), l.get(8));
            assertEquals(List.of(List.of(), List.of(2L)), back.get("more"));
        }
    }

    @Test
    void heterogeneousListsNestedToTheLimitPassAndOneDeeperIsRefused() throws Exception {
        int limit = io.switchboard.idl.runtime.HeterogeneousList.MAX_DEPTH;
        DynamicType mixed = dynamic.type("Mixed");
        DynamicList deepest = mixed.newList("bottom");
        for (int i = 1; i < limit; i++) {
            deepest = mixed.newList(deepest);
        }
        DynamicRecord atLimit = dynamic.request("echoMixed").set("list", deepest);
        EchoMixed bean = new EchoMixed();
        Mixed nested = Mixed.of("bottom");
        for (int i = 1; i < limit; i++) {
            nested = Mixed.of(nested);
        }
        bean.setList(nested);
        byte[] bytes = BinaryWriter.toBytes(dynamicBinary, atLimit, MAX_NODES);
        assertArrayEquals(BinaryWriter.toBytes(generatedBinary, bean, MAX_NODES), bytes);
        assertEquals(generatedXml.toXml(bean), write(dynamicXml, atLimit));
        assertEquals(atLimit.get("list"), BinaryReader.fromBytes(dynamicBinary, bytes, BinaryLimits.unlimited(),
                "echoMixed", DynamicRecord.class).get("list"));

        // one level more: refused when written, in both forms, naming the limit
        DynamicRecord tooDeep = dynamic.request("echoMixed").set("list", mixed.newList(deepest));
        WireFormatException w = assertThrows(WireFormatException.class,
                () -> BinaryWriter.toBytes(dynamicBinary, tooDeep, MAX_NODES));
        assertEquals(WireFormatException.DEPTH_LIMIT, w.reason());
        assertTrue(w.getMessage().contains("Mixed nests deeper than 64"), w.getMessage());
        JAXBException x = assertThrows(JAXBException.class, () -> write(dynamicXml, tooDeep));
        assertTrue(x.getMessage().contains("Mixed nests deeper than 64"), x.getMessage());
        // a list that holds itself never ends: refused the same way
        DynamicList self = mixed.newList(1.0);
        self.add(self);
        assertThrows(WireFormatException.class, () -> BinaryWriter.toBytes(dynamicBinary,
                dynamic.request("echoMixed").set("list", self), MAX_NODES));

        // and when read: 65 nested lists on the wire, as a hostile peer would send them
        byte[] deeper = new byte[1 + 3 * limit + 2 + 1];
        int at = 1;   // empty node table
        for (int i = 0; i < limit; i++) {
            deeper[at++] = (byte) io.switchboard.codec.binary.WireFormat.CHOICES;
            deeper[at++] = 1;   // one element
            deeper[at++] = 9;   // alternative 9: a nested Mixed
        }
        deeper[at++] = (byte) io.switchboard.codec.binary.WireFormat.CHOICES;
        deeper[at++] = 0;
        deeper[at] = (byte) io.switchboard.codec.binary.WireFormat.NULL;   // the field "more"
        w = assertThrows(WireFormatException.class, () -> BinaryReader.fromBytes(dynamicBinary, deeper,
                BinaryLimits.unlimited(), "echoMixed", DynamicRecord.class));
        assertEquals(WireFormatException.DEPTH_LIMIT, w.reason());
        // the generated codec refuses the same bytes the same way
        assertEquals(WireFormatException.DEPTH_LIMIT, assertThrows(WireFormatException.class,
                () -> BinaryReader.fromBytes(generatedBinary, deeper, BinaryLimits.unlimited(), EchoMixed.class)).reason());
        String xml = "<echoMixed xmlns=\"urn:switchboard:test:conformance\"><list>" + "<list>".repeat(limit)
                + "</list>".repeat(limit) + "</list></echoMixed>";
        assertThrows(XmlMessages.ListDepthException.class, () -> read(dynamicXml, xml, DynamicRecord.class));
        String atLimitXml = "<echoMixed xmlns=\"urn:switchboard:test:conformance\"><list>" + "<list>".repeat(limit - 1)
                + "</list>".repeat(limit - 1) + "</list></echoMixed>";
        assertEquals(generatedXml.toXml(generatedXml.fromXml(atLimitXml, EchoMixed.class)),
                write(dynamicXml, read(dynamicXml, atLimitXml, DynamicRecord.class)));
    }

    @Test
    void heterogeneousListElementsAreCheckedByName() {
        DynamicType mixed = dynamic.type("Mixed");
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class, () -> mixed.newList(1.0, null));
        assertTrue(e.getMessage().contains("element 1 of heterogeneous list Mixed is null"), e.getMessage());
        e = assertThrows(IllegalArgumentException.class, () -> mixed.newList(7));   // xs:int is no alternative
        assertTrue(e.getMessage().contains("is a Integer, which none of its alternatives allows")
                && e.getMessage().contains("integer (Long)") && e.getMessage().contains("list (DynamicList of Mixed)"),
                e.getMessage());
        DynamicList list = mixed.newList();
        e = assertThrows(IllegalArgumentException.class, () -> list.add(dynamic.type("LinkEntry").newRecord()));
        assertTrue(e.getMessage().contains("DynamicRecord of LinkEntry"), e.getMessage());
        e = assertThrows(IllegalArgumentException.class, () -> list.set(0, null));
        e = assertThrows(IllegalArgumentException.class,
                () -> dynamic.request("echoMixed").set("list", new ArrayList<>(List.of(1.0))));
        assertTrue(e.getMessage().contains("expects DynamicList of Mixed, got ArrayList"), e.getMessage());
        e = assertThrows(IllegalArgumentException.class, () -> dynamic.type("Point").newList());
        assertTrue(e.getMessage().contains("Point is not a heterogeneous list type"), e.getMessage());
    }

    @Test
    void malformedHeterogeneousListsAreRefusedByName() {
        // a count that the bytes left cannot hold, an alternative the type does not have, a null element
        byte[] hugeCount = {0, (byte) io.switchboard.codec.binary.WireFormat.CHOICES, (byte) 0xff, (byte) 0xff, 0x7f};
        WireFormatException w = assertThrows(WireFormatException.class, () -> BinaryReader.fromBytes(dynamicBinary,
                hugeCount, BinaryLimits.unlimited(), "echoMixed", DynamicRecord.class));
        assertTrue(w.getMessage().contains("echoMixed.list") && w.getMessage().contains("bytes left"), w.getMessage());
        byte[] unknownAlternative = {0, (byte) io.switchboard.codec.binary.WireFormat.CHOICES, 1, 10,
            (byte) io.switchboard.codec.binary.WireFormat.NULL, (byte) io.switchboard.codec.binary.WireFormat.NULL};
        w = assertThrows(WireFormatException.class, () -> BinaryReader.fromBytes(dynamicBinary, unknownAlternative,
                BinaryLimits.unlimited(), "echoMixed", DynamicRecord.class));
        assertTrue(w.getMessage().contains("alternative 10 of a list type that has 10"), w.getMessage());
        byte[] nullText = {0, (byte) io.switchboard.codec.binary.WireFormat.CHOICES, 1, 3,
            (byte) io.switchboard.codec.binary.WireFormat.NULL, (byte) io.switchboard.codec.binary.WireFormat.NULL};
        w = assertThrows(WireFormatException.class, () -> BinaryReader.fromBytes(dynamicBinary, nullText,
                BinaryLimits.unlimited(), "echoMixed", DynamicRecord.class));
        assertTrue(w.getMessage().contains("null element in a heterogeneous list"), w.getMessage());

        String ns = "<echoMixed xmlns=\"urn:switchboard:test:conformance\" "
                + "xmlns:xsi=\"http://www.w3.org/2001/XMLSchema-instance\"><list>";
        JAXBException x = assertThrows(JAXBException.class, () -> read(dynamicXml,
                ns + "<text xsi:nil=\"true\"/></list></echoMixed>", DynamicRecord.class));
        assertTrue(x.getMessage().contains("nil element text") && x.getMessage().contains("no nulls"), x.getMessage());
        x = assertThrows(JAXBException.class, () -> read(dynamicXml, ns + "<numbr>1</numbr></list></echoMixed>",
                DynamicRecord.class));
        assertTrue(x.getMessage().contains("numbr") && x.getMessage().contains("heterogeneous list Mixed"), x.getMessage());
        x = assertThrows(JAXBException.class, () -> read(dynamicXml, ns + "<integer>1.5</integer></list></echoMixed>",
                DynamicRecord.class));
        assertTrue(x.getMessage().contains("not an xs:long"), x.getMessage());
    }

    @Test
    void cyclesAndSharedNodesComeBackWithTheirShape() throws Exception {
        LinkEntry cycle = Values.list(4);
        cycle.getNextLink().getNextLink().getNextLink().setNextLink(cycle.getNextLink());
        EchoList l = new EchoList();
        l.setHead(cycle);
        for (DynamicRecord head : new DynamicRecord[] {
            (DynamicRecord) BinaryReader.fromBytes(dynamicBinary, BinaryWriter.toBytes(generatedBinary, l, MAX_NODES),
                    BinaryLimits.unlimited(), "echoList", DynamicRecord.class).get("head"),
            (DynamicRecord) read(dynamicXml, generatedXml.toXml(l), DynamicRecord.class).get("head")}) {
            DynamicRecord second = (DynamicRecord) head.get("nextLink");
            DynamicRecord fourth = (DynamicRecord) ((DynamicRecord) second.get("nextLink")).get("nextLink");
            assertSame(second, fourth.get("nextLink"), "the last node points back to the second, the same object");
            assertEquals(-0.0, (Double) second.get("ddouble"));
            assertEquals(Double.doubleToRawLongBits(-0.0), Double.doubleToRawLongBits((Double) second.get("ddouble")));
            assertNull(head.get("sstring"));
        }
    }

    @Test
    void valuesOfTheWrongTypeAreRefusedByName() {
        DynamicRecord request = dynamic.request("echoDoubles");
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
                () -> request.set("values", List.of(1.0, 2.0)));
        assertTrue(e.getMessage().contains("'values'") && e.getMessage().contains("double[]")
                && e.getMessage().contains("List"), e.getMessage());
        e = assertThrows(IllegalArgumentException.class, () -> request.set("valuez", new double[0]));
        assertTrue(e.getMessage().contains("no field 'valuez'") && e.getMessage().contains("[values]"), e.getMessage());
        DynamicRecord divide = dynamic.request("divide");
        e = assertThrows(IllegalArgumentException.class, () -> divide.set("dividend", 7));
        assertTrue(e.getMessage().contains("expects Long, got Integer"), e.getMessage());
        // a required number left unset is refused when written, in both forms, naming it
        divide.set("dividend", 7L);
        WireFormatException w = assertThrows(WireFormatException.class,
                () -> BinaryWriter.toBytes(dynamicBinary, divide, MAX_NODES));
        assertEquals("divide.divisor", w.field());
        assertTrue(w.getMessage().contains("required"), w.getMessage());
        JAXBException x = assertThrows(JAXBException.class, () -> write(dynamicXml, divide));
        assertTrue(x.getMessage().contains("divide.divisor"), x.getMessage());
        // a list item of another type, put in after the check of set()
        List<Object> points = new ArrayList<>(Arrays.asList(dynamic.type("Point").newRecord().set("x", 1.0).set("y", 2.0)));
        DynamicRecord record = dynamic.type("Record").newRecord().set("flag", true).set("small", (byte) 1)
                .set("points", points);
        points.add("not a point");
        e = assertThrows(IllegalArgumentException.class, () -> BinaryWriter.toBytes(dynamicBinary,
                dynamic.request("echoRecord").set("record", record), MAX_NODES));
        assertTrue(e.getMessage().contains("item 1 is a String"), e.getMessage());
    }

    /**
     * Java's own number forms (hexadecimal, a type suffix, "Infinity") are not xs:double: both readers
     * refuse them instead of reading a value the sender did not write; XML's forms still read.
     */
    @Test
    void javaOnlyNumberFormsAreRefusedAndXmlFormsRead() throws Exception {
        for (String text : new String[] {"0x1p3", "0X10", "1d", "1.5F", "2e3f", "Infinity", "-Infinity", "1 0x1p3"}) {
            String xml = "<echoDoubles xmlns=\"urn:switchboard:test:conformance\"><values>" + text + "</values></echoDoubles>";
            JAXBException dynamicRefusal = assertThrows(JAXBException.class,
                    () -> read(dynamicXml, xml, DynamicRecord.class), text);
            assertTrue(String.valueOf(dynamicRefusal.getMessage()).contains("values"), text + ": " + dynamicRefusal);
            assertThrows(JAXBException.class, () -> generatedXml.fromXml(xml, EchoDoubles.class), text);
        }
        String good = "<echoDoubles xmlns=\"urn:switchboard:test:conformance\"><values>INF -INF NaN -0 1.5E3 .5</values>"
                + "</echoDoubles>";
        double[] expected = {Double.POSITIVE_INFINITY, Double.NEGATIVE_INFINITY, Double.NaN, -0.0, 1500, 0.5};
        Values.assertSameDoubles(expected, generatedXml.fromXml(good, EchoDoubles.class).getValues());
        Values.assertSameDoubles(expected, (double[]) read(dynamicXml, good, DynamicRecord.class).get("values"));
    }

    @Test
    void malformedMessagesAreRefusedByName() {
        String dangling = "<echoList xmlns=\"urn:switchboard:test:conformance\"><head>n7</head><sb-graph></sb-graph></echoList>";
        JAXBException e = assertThrows(JAXBException.class, () -> read(dynamicXml, dangling, DynamicRecord.class));
        assertTrue(e.getMessage().contains("n7"), e.getMessage());
        String unknown = "<echoDoubles xmlns=\"urn:switchboard:test:conformance\"><valuez>1</valuez></echoDoubles>";
        e = assertThrows(JAXBException.class, () -> read(dynamicXml, unknown, DynamicRecord.class));
        assertTrue(e.getMessage().contains("valuez"), e.getMessage());
        String badNumber = "<echoDoubles xmlns=\"urn:switchboard:test:conformance\"><values>1 x</values></echoDoubles>";
        e = assertThrows(JAXBException.class, () -> read(dynamicXml, badNumber, DynamicRecord.class));
        assertTrue(e.getMessage().contains("echoDoubles/values"), e.getMessage());
        String node = "<LinkEntry sb-id=\"n0\"><llong>1</llong><sshort>1</sshort><iint>1</iint><ffloat>1</ffloat>"
                + "<ddouble>1</ddouble></LinkEntry>";
        String twice = "<echoList xmlns=\"urn:switchboard:test:conformance\"><sb-graph>" + node + node
                + "</sb-graph></echoList>";
        e = assertThrows(JAXBException.class, () -> read(dynamicXml, twice, DynamicRecord.class));
        assertTrue(e.getMessage().contains("twice"), e.getMessage());
        // the node limit holds while reading
        XmlCodec small = XmlCodec.of(dynamic.descriptor(), 2);
        EchoList l = new EchoList();
        l.setHead(Values.list(3));
        assertThrows(io.switchboard.codec.Graphs.GraphLimitException.class,
                () -> read(small, generatedXml.toXml(l), DynamicRecord.class));
        // binary: a reference to a node of the wrong count is malformed
        byte[] bytes = BinaryWriter.toBytes(generatedBinary, l, MAX_NODES);
        assertThrows(WireFormatException.class, () -> BinaryReader.fromBytes(dynamicBinary, bytes,
                BinaryLimits.of(1 << 20, 2), "echoList", DynamicRecord.class));
    }

    @Test
    void aSchemaWithADtdIsRefusedBeforeAnythingIsBuilt() {
        String hostile = "<?xml version=\"1.0\"?><!DOCTYPE x [<!ENTITY e SYSTEM \"file:///etc/passwd\">]>"
                + ConformanceComponent.DESCRIPTOR.schema().substring(ConformanceComponent.DESCRIPTOR.schema().indexOf("<xs:schema"));
        assertThrows(io.switchboard.idl.SchemaException.class, () -> DynamicInterface.fromSchema(hostile));
    }

    private static String write(XmlCodec codec, Object message) throws Exception {
        StringWriter w = new StringWriter();
        XMLStreamWriter out = XMLOutputFactory.newFactory().createXMLStreamWriter(w);
        codec.write(message, out);
        out.flush();
        return w.toString();
    }

    private static <T> T read(XmlCodec codec, String xml, Class<T> type) throws Exception {
        XMLInputFactory f = XMLInputFactory.newFactory();
        f.setProperty(XMLInputFactory.SUPPORT_DTD, false);
        XMLStreamReader in = f.createXMLStreamReader(new StringReader(xml));
        in.nextTag();
        return codec.read(in, type);
    }
}
