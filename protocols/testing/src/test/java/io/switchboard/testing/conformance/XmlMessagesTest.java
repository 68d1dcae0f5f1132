package io.switchboard.testing.conformance;

import io.switchboard.idl.runtime.ServiceDescriptor;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.switchboard.codec.Graphs;
import io.switchboard.codec.XmlMessages;
import jakarta.xml.bind.JAXBException;
import java.io.StringReader;
import javax.xml.XMLConstants;
import javax.xml.transform.stream.StreamSource;
import javax.xml.validation.SchemaFactory;
import javax.xml.validation.Validator;
import org.junit.jupiter.api.Test;

/**
 * The generated JAXB beans and the WSDL's wire schema agree, and values survive the XML form
 * exactly. Every protocol that writes XML relies on this.
 */
class XmlMessagesTest {
    private final XmlMessages xml = new XmlMessages(ConformanceComponent.DESCRIPTOR, 2_000_000);

    private <T> T roundTrip(Object message, Class<T> type) throws Exception {
        String text = xml.toXml(message);
        validate(text);
        return xml.fromXml(text, type);
    }

    /** Validates a message against the schema embedded in the generated WSDL. */
    private static void validate(String messageXml) throws Exception {
        String wsdl = ConformanceComponent.DESCRIPTOR.document(ServiceDescriptor.WSDL);
        String schema = wsdl.substring(wsdl.indexOf("<xs:schema"), wsdl.indexOf("</xs:schema>") + "</xs:schema>".length());
        SchemaFactory f = SchemaFactory.newInstance(XMLConstants.W3C_XML_SCHEMA_NS_URI);
        Validator v = f.newSchema(new StreamSource(new StringReader(schema))).newValidator();
        v.validate(new StreamSource(new StringReader(messageXml)));
    }

    @Test
    void doublesRoundTripBitForBit() throws Exception {
        EchoDoubles m = new EchoDoubles();
        m.setValues(Values.EDGE_DOUBLES.clone());
        Values.assertSameDoubles(Values.EDGE_DOUBLES, roundTrip(m, EchoDoubles.class).getValues());
    }

    @Test
    void nullAndEmptyArraysStayApart() throws Exception {
        EchoDoubles empty = new EchoDoubles();
        empty.setValues(new double[0]);
        assertEquals(0, roundTrip(empty, EchoDoubles.class).getValues().length);
        assertNull(roundTrip(new EchoDoubles(), EchoDoubles.class).getValues());
    }

    @Test
    void recordsRoundTripWithEveryFieldSetOrEmpty() throws Exception {
        for (Record r : new Record[] {Values.fullRecord(), Values.emptyRecord(), new Record()}) {
            EchoRecord m = new EchoRecord();
            m.setRecord(r);
            Values.assertSameRecord(r, roundTrip(m, EchoRecord.class).getRecord());
        }
    }

    @Test
    void longListIsFlatAndNeedsNoDeepStack() throws Exception {
        EchoList m = new EchoList();
        m.setHead(Values.list(100_000));
        String text = xml.toXml(m);
        assertTrue(text.length() > 100_000);
        EchoList back = xml.fromXml(text, EchoList.class);
        assertEquals(100_000, Values.length(back.getHead()));
        Values.assertSameList(m.getHead(), back.getHead());
    }

    @Test
    void cyclesAndSharedNodesKeepTheirShape() throws Exception {
        LinkEntry head = Values.list(5);
        LinkEntry tail = head;
        while (tail.getNextLink() != null) {
            tail = tail.getNextLink();
        }
        tail.setNextLink(head);
        EchoList m = new EchoList();
        m.setHead(head);
        LinkEntry back = roundTrip(m, EchoList.class).getHead();
        LinkEntry e = back;
        for (int i = 0; i < 5; i++) {
            e = e.getNextLink();
        }
        assertSame(back, e, "the tail points back at the head");
        Values.assertSameList(head, back);
    }

    @Test
    void danglingReferenceIsAnError() throws Exception {
        String bad = "<echoList xmlns=\"urn:switchboard:test:conformance\"><head>n7</head><sb-graph/></echoList>";
        assertThrows(JAXBException.class, () -> xml.fromXml(bad, EchoList.class));
    }

    @Test
    void repeatedNodeIdIsAnError() {
        String node = "<LinkEntry sb-id=\"n0\"><llong>1</llong><sshort>1</sshort><iint>1</iint><ffloat>1</ffloat>"
                + "<ddouble>1</ddouble></LinkEntry>";
        String bad = "<echoList xmlns=\"urn:switchboard:test:conformance\"><head>n0</head><sb-graph>" + node + node
                + "</sb-graph></echoList>";
        JAXBException e = assertThrows(JAXBException.class, () -> xml.fromXml(bad, EchoList.class));
        assertTrue(String.valueOf(e).contains("appears twice") || String.valueOf(e.getLinkedException()).contains("appears twice")
                || String.valueOf(e.getCause()).contains("appears twice"), String.valueOf(e));
    }

    @Test
    void graphNodeLimitIsEnforcedOnBothSides() throws Exception {
        XmlMessages small = new XmlMessages(ConformanceComponent.DESCRIPTOR, 10);
        EchoList m = new EchoList();
        m.setHead(Values.list(11));
        assertThrows(Graphs.GraphLimitException.class, () -> small.toXml(m));
        String text = xml.toXml(m);
        Exception e = assertThrows(Exception.class, () -> small.fromXml(text, EchoList.class));
        assertTrue(String.valueOf(e).contains("more than 10"), String.valueOf(e));
    }

    @Test
    void doctypeIsRefused() {
        String bad = "<!DOCTYPE x [<!ENTITY e SYSTEM \"file:///etc/passwd\">]>"
                + "<echoDoubles xmlns=\"urn:switchboard:test:conformance\"><values>&e;</values></echoDoubles>";
        assertThrows(JAXBException.class, () -> xml.fromXml(bad, EchoDoubles.class));
    }

    @Test
    void ndArraysFollowTheWireSchemaAndInconsistentOnesAreRefused() throws Exception {
        EchoTensor m = new EchoTensor();
        m.setTensor(Tensor.of(new double[][] {{1, -0.0}, {Double.NaN, Double.NEGATIVE_INFINITY}}));
        Values.assertSameTensor(m.getTensor(), roundTrip(m, EchoTensor.class).getTensor());
        assertTrue(ConformanceComponent.DESCRIPTOR.document(ServiceDescriptor.WSDL).contains("row-major"), "the WSDL says how to read it");
        assertTrue(ConformanceComponent.DESCRIPTOR.document(ServiceDescriptor.PROTO).contains("row-major"), "so does the .proto");
        String bad = "<echoTensor xmlns=\"urn:switchboard:test:conformance\"><tensor><shape>2 2</shape>"
                + "<values>1 2 3</values></tensor></echoTensor>";
        JAXBException e = assertThrows(JAXBException.class, () -> xml.fromXml(bad, EchoTensor.class));
        assertTrue(String.valueOf(e.getMessage()).contains("needs 4 values"), String.valueOf(e));
    }

    @Test
    void heterogeneousListsMatchTheWsdlAndRoundTrip() throws Exception {
        EchoMixed m = new EchoMixed();
        m.setList(Values.mixedOfEveryKind());
        m.setMore(java.util.List.of(Mixed.of(), Values.nested(5)));
        EchoMixed back = roundTrip(m, EchoMixed.class);
        Values.assertSameMixed(m.getList(), back.getList());
        Values.assertSameMixed(m.getMore().get(1), back.getMore().get(1));
        String text = xml.toXml(m);
        assertTrue(text.contains("<list><number>1.5</number><number>-0.0</number><number>NaN</number>"), text);
    }
}
