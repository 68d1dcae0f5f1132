package io.switchboard.registry.server;

import io.switchboard.registry.Entries;
import io.switchboard.registry.ComponentEntry;
import com.code_intelligence.jazzer.junit.FuzzTest;
import io.switchboard.codec.Graphs;
import io.switchboard.codec.XmlMessages;
import io.switchboard.testing.DecoderCheck;
import io.switchboard.registry.wire.Bind;
import io.switchboard.registry.wire.EndpointInfo;
import io.switchboard.registry.wire.Entry;
import io.switchboard.registry.wire.RegistryComponent;
import jakarta.xml.bind.JAXBException;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.time.OffsetDateTime;
import java.util.List;

/**
 * Fuzzes what the registry does with the body of a {@code bind} (or {@code rebind}) request: the
 * registry's own SOAP message read by {@link XmlMessages}, then the entry turned into a
 * {@link ComponentEntry} by {@link Entries#fromWire(Entry)}, as {@code RegistryService} does.
 * Only {@link JAXBException} (the reader refuses a missing required member by name) and
 * {@link Graphs.GraphLimitException}, and {@link IllegalArgumentException} from {@code fromWire}'s own
 * explicit checks, may come out, within 5 s; a {@code NullPointerException} is a finding. A bind it
 * reads must survive a round trip through the writer, and its entry one through the store's form.
 *
 * <p>CI runs the inputs in {@code src/test/resources/io/switchboard/registry/RegistryEntryFuzzTestInputs};
 * to fuzz: {@code JAZZER_FUZZ=1 JAZZER_INSTRUMENT='io.switchboard.**' mvn -pl registry test
 * -Dtest=RegistryEntryFuzzTest}. {@link #main} rewrites the seed inputs.
 */
class RegistryEntryFuzzTest {
    private static final XmlMessages XML = new XmlMessages(RegistryComponent.DESCRIPTOR, 1000);
    private static final DecoderCheck CHECK = new DecoderCheck(Duration.ofSeconds(5),
            List.of(JAXBException.class, Graphs.GraphLimitException.class, IllegalArgumentException.class));

    static {
        try {
            XML.fromXml(XML.toXml(bindRequest(entry())), Bind.class); // JAXB's context, outside the time limit
        } catch (JAXBException e) {
            throw new ExceptionInInitializerError(e);
        }
    }

    @FuzzTest(maxDuration = "2m")
    void bind(byte[] input) {
        String xml = new String(input, StandardCharsets.UTF_8);
        Bind bind = CHECK.run(input.length, () -> {
            Bind read = XML.fromXml(xml, Bind.class);
            if (read.getEntry() != null) {
                Entries.fromWire(read.getEntry());   // a missing member is an IllegalArgumentException, named
            }
            return read;
        });
        if (bind != null) {
            DecoderCheck.assertRoundTrip(bind, b -> XML.toXml(b).getBytes(StandardCharsets.UTF_8),
                    bytes -> XML.fromXml(new String(bytes, StandardCharsets.UTF_8), Bind.class));
            if (bind.getEntry() != null) {
                // and the entry the registry keeps says what the wire said
                ComponentEntry entry = Entries.fromWire(bind.getEntry());
                if (!entry.equals(Entries.fromWire(Entries.toWire(entry)))) {
                    throw new AssertionError("an entry changed between the wire and the store: " + entry);
                }
            }
        }
    }

    private static Entry entry() {
        Entry e = new Entry();
        e.setName("Echo");
        e.setInstanceId("i-1");
        EndpointInfo soap = new EndpointInfo();
        soap.setProtocol("soap");
        soap.setAddress("http://127.0.0.1:8080/axis2/services/Echo");
        EndpointInfo grpc = new EndpointInfo();
        grpc.setProtocol("grpc");
        grpc.setAddress("grpc://127.0.0.1:9090");
        e.setEndpoints(List.of(soap, grpc));
        e.setInterfaceSchema("<xs:schema/>");
        e.setWsdlUrl("http://127.0.0.1:8080/Echo.wsdl");
        e.setBoundAt(OffsetDateTime.parse("2026-11-22T10:00:00Z"));
        e.setFeatures(List.of(ComponentEntry.CALL_IDS));
        e.setLeaseSeconds(30);
        return e;
    }

    private static Bind bindRequest(Entry e) {
        Bind b = new Bind();
        b.setEntry(e);
        b.setCredential("secret");
        return b;
    }

    /** Writes the seed inputs into {@code args[0]} (the module's {@code src/test/resources}). */
    public static void main(String[] args) throws IOException, JAXBException {
        Path dir = Path.of(args[0], "io/switchboard/registry/RegistryEntryFuzzTestInputs/bind");
        Files.createDirectories(dir);
        Files.writeString(dir.resolve("seed-full"), XML.toXml(bindRequest(entry())));
        Entry bare = new Entry();
        bare.setName("Matrix");
        bare.setInstanceId("i-2");
        EndpointInfo soap = new EndpointInfo();
        soap.setProtocol("soap");
        soap.setAddress("http://h/x");
        bare.setEndpoints(List.of(soap));
        Files.writeString(dir.resolve("seed-bare"), XML.toXml(bindRequest(bare)));
        Files.writeString(dir.resolve("seed-no-entry"), XML.toXml(bindRequest(null)));
    }
}
