package io.switchboard.testing.fuzz;

import com.code_intelligence.jazzer.junit.FuzzTest;
import io.switchboard.codec.Graphs;
import io.switchboard.idl.runtime.OperationDescriptor;
import io.switchboard.codec.XmlMessages;
import io.switchboard.testing.conformance.ConformanceComponent;
import io.switchboard.testing.conformance.DivideFault;
import io.switchboard.testing.conformance.EchoDoubles;
import io.switchboard.testing.conformance.EchoList;
import io.switchboard.testing.conformance.EchoMixed;
import io.switchboard.testing.conformance.EchoRecord;
import io.switchboard.testing.conformance.LinkEntry;
import io.switchboard.testing.conformance.Ping;
import io.switchboard.testing.conformance.Values;
import io.switchboard.testing.DecoderCheck;
import jakarta.xml.bind.JAXBException;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;

/**
 * Fuzzes {@link XmlMessages#fromXml} (what the SOAP server runs on a request body, and the client
 * on a response) with arbitrary text for every message class of the conformance component. The
 * first byte picks the class; the rest is the XML, as UTF-8. Only {@link JAXBException} (and
 * {@link Graphs.GraphLimitException} for too many linked nodes, {@link XmlMessages.ListDepthException}
 * for heterogeneous lists nested too deeply) may come out, within 5 s,
 * allocating at most 64 MiB plus 256 bytes per input byte; a message it reads must survive a round
 * trip through the writer ({@link DecoderCheck#assertRoundTrip}).
 *
 * <p>CI runs the inputs in {@code src/test/resources/.../XmlMessagesFuzzTestInputs}; to fuzz:
 * {@code JAZZER_FUZZ=1 mvn -pl protocols/testing test -Dtest=XmlMessagesFuzzTest}. {@link #main}
 * rewrites the seed inputs.
 */
class XmlMessagesFuzzTest {
    private static final List<Class<?>> CLASSES = messageClasses();
    private static final XmlMessages XML = new XmlMessages(ConformanceComponent.DESCRIPTOR, 1000);
    private static final DecoderCheck CHECK = new DecoderCheck(Duration.ofSeconds(5),
            List.of(JAXBException.class, Graphs.GraphLimitException.class, XmlMessages.ListDepthException.class));

    static {
        // JAXB builds its context on first use, which takes seconds while the fuzzer instruments it:
        // do that outside the per-input time limit
        try {
            XML.fromXml(XML.toXml(new Ping()), Ping.class);
        } catch (JAXBException e) {
            throw new ExceptionInInitializerError(e);
        }
    }

    private static List<Class<?>> messageClasses() {
        List<Class<?>> classes = new ArrayList<>();
        for (OperationDescriptor op : ConformanceComponent.DESCRIPTOR.operations()) {
            classes.add(op.requestClass());
            if (op.responseClass() != null) {
                classes.add(op.responseClass());
            }
            if (op.faultInfoClass() != null) {
                classes.add(op.faultInfoClass());
            }
        }
        return classes;
    }

    @FuzzTest(maxDuration = "2m")
    void fromXml(byte[] input) {
        if (input.length < 1) {
            return;
        }
        Class<?> type = CLASSES.get((input[0] & 0xFF) % CLASSES.size());
        String xml = new String(input, 1, input.length - 1, StandardCharsets.UTF_8);
        Object value = CHECK.run(input.length, () -> XML.fromXml(xml, type));
        if (value != null) {
            DecoderCheck.assertRoundTrip(value, v -> XML.toXml(v).getBytes(StandardCharsets.UTF_8),
                    bytes -> XML.fromXml(new String(bytes, StandardCharsets.UTF_8), type));
        }
    }

    /** Writes the seed inputs into {@code args[0]} (the module's {@code src/test/resources}). */
    public static void main(String[] args) throws IOException, JAXBException {
        Path dir = Path.of(args[0], "io/switchboard/protocol/fuzz/XmlMessagesFuzzTestInputs/fromXml");
        Files.createDirectories(dir);
        EchoDoubles doubles = new EchoDoubles();
        doubles.setValues(Values.EDGE_DOUBLES.clone());
        EchoList list = new EchoList();
        LinkEntry head = Values.list(3);
        head.getNextLink().getNextLink().setNextLink(head.getNextLink());
        list.setHead(head);
        EchoRecord full = new EchoRecord();
        full.setRecord(Values.fullRecord());
        EchoRecord empty = new EchoRecord();
        empty.setRecord(Values.emptyRecord());
        DivideFault fault = new DivideFault();
        fault.setReason("division by zero");
        fault.setDividend(7);
        EchoMixed mixed = new EchoMixed();
        mixed.setList(Values.mixedOfEveryKind());
        mixed.setMore(List.of(Values.nested(3)));
        for (Object m : new Object[] {doubles, new EchoDoubles(), list, full, empty, new Ping(), fault, mixed}) {
            byte[] xml = XML.toXml(m).getBytes(StandardCharsets.UTF_8);
            byte[] input = new byte[xml.length + 1];
            input[0] = (byte) CLASSES.indexOf(m.getClass());
            System.arraycopy(xml, 0, input, 1, xml.length);
            String name = m.getClass().getSimpleName() + (m == empty ? "-empty" : m instanceof EchoDoubles d
                    && d.getValues() == null ? "-null" : "");
            Files.write(dir.resolve("seed-" + name), input);
        }
        System.out.println(Arrays.toString(dir.toFile().list()));
    }
}
