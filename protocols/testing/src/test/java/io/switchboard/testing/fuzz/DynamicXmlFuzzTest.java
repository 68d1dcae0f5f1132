package io.switchboard.testing.fuzz;

import com.code_intelligence.jazzer.junit.FuzzTest;
import io.switchboard.idl.SecureXml;
import io.switchboard.codec.Graphs;
import io.switchboard.codec.XmlCodec;
import io.switchboard.codec.XmlMessages;
import io.switchboard.codec.dynamic.DynamicInterface;
import io.switchboard.codec.dynamic.DynamicRecord;
import io.switchboard.testing.conformance.ConformanceComponent;
import io.switchboard.testing.DecoderCheck;
import jakarta.xml.bind.JAXBException;
import java.io.StringReader;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.List;
import javax.xml.stream.XMLInputFactory;
import javax.xml.stream.XMLStreamException;
import javax.xml.stream.XMLStreamReader;

/**
 * Fuzzes the model-driven XML reader ({@code DynamicXml}, what a client without generated code
 * reads SOAP responses with) on the conformance interface, with the inputs and input format of
 * {@link XmlMessagesFuzzTest} (the first byte is ignored here: the element names the message).
 * Only {@link JAXBException} (and {@link Graphs.GraphLimitException}) may come out, within 5 s; a
 * message it reads must survive a round trip through the writer.
 *
 * <p>CI runs the inputs in {@code src/test/resources/.../DynamicXmlFuzzTestInputs}; to fuzz:
 * {@code JAZZER_FUZZ=1 mvn -pl protocols/testing test -Dtest=DynamicXmlFuzzTest}.
 */
class DynamicXmlFuzzTest {
    private static final XmlCodec XML = XmlCodec.of(
            DynamicInterface.fromSchema(ConformanceComponent.DESCRIPTOR.schema()).descriptor(), 1000);
    private static final XMLInputFactory INPUT = SecureXml.inputFactory();
    private static final DecoderCheck CHECK = new DecoderCheck(Duration.ofSeconds(5),
            List.of(JAXBException.class, Graphs.GraphLimitException.class, XmlMessages.ListDepthException.class));

    @FuzzTest(maxDuration = "2m")
    void read(byte[] input) {
        if (input.length < 1) {
            return;
        }
        String xml = new String(input, 1, input.length - 1, StandardCharsets.UTF_8);
        Object value = CHECK.run(input.length, () -> {
            XMLStreamReader in;
            try {
                in = INPUT.createXMLStreamReader(new StringReader(xml));
                in.nextTag();
            } catch (XMLStreamException e) {
                throw new JAXBException(e.getMessage(), e);   // not even a start tag: malformed, as XmlMessages says
            }
            return XML.read(in, DynamicRecord.class);
        });
        if (value != null) {
            DecoderCheck.assertRoundTrip(value, DynamicXmlFuzzTest::write, DynamicXmlFuzzTest::readBack);
        }
    }

    private static byte[] write(Object message) throws Exception {
        java.io.StringWriter w = new java.io.StringWriter();
        javax.xml.stream.XMLStreamWriter out = javax.xml.stream.XMLOutputFactory.newFactory().createXMLStreamWriter(w);
        XML.write(message, out);
        out.flush();
        return w.toString().getBytes(StandardCharsets.UTF_8);
    }

    private static Object readBack(byte[] bytes) throws Exception {
        XMLStreamReader in = INPUT.createXMLStreamReader(new StringReader(new String(bytes, StandardCharsets.UTF_8)));
        in.nextTag();
        return XML.read(in, DynamicRecord.class);
    }
}
