package io.switchboard.bench.jmh;

import io.switchboard.components.echo.EchoComponent;
import io.switchboard.idl.SecureXml;
import io.switchboard.codec.XmlMessages;
import io.switchboard.codec.message.MessageLimits;
import io.switchboard.codec.proto.ProtoCodec;
import jakarta.xml.bind.JAXBException;
import java.io.ByteArrayInputStream;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.ObjectInputStream;
import java.io.ObjectOutputStream;
import java.io.PrintStream;
import java.util.List;
import java.util.Locale;
import java.util.concurrent.TimeUnit;
import javax.xml.stream.XMLInputFactory;
import javax.xml.stream.XMLOutputFactory;
import javax.xml.stream.XMLStreamException;
import javax.xml.stream.XMLStreamReader;
import javax.xml.stream.XMLStreamWriter;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.BenchmarkMode;
import org.openjdk.jmh.annotations.Fork;
import org.openjdk.jmh.annotations.Measurement;
import org.openjdk.jmh.annotations.Mode;
import org.openjdk.jmh.annotations.OutputTimeUnit;
import org.openjdk.jmh.annotations.Param;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.State;
import org.openjdk.jmh.annotations.Warmup;

/**
 * Serialization alone, no network, per encoding, for the SC2000 payloads: the SOAP body as XML
 * ({@link XmlMessages}, JAXB through StAX, linked structures flat), the protobuf encoding of gRPC
 * (the generated {@link ProtoCodec}, one part), and Java serialization ({@code ObjectOutputStream}) of the same
 * data as plain {@link java.io.Serializable} values. Each encoding writes the message to bytes
 * ({@code *Write}) and reads those bytes back into objects ({@code *Read}).
 *
 * <p>Java serialization recurses once per list node, so it overflows the thread stack on lists of
 * about a thousand nodes: such a cell fails with an {@code IllegalStateException} that says so
 * (JMH reports it and goes on with the next cell).
 *
 * <p>Bytes per message for each encoding: {@code main} prints them as a Markdown table, without
 * timing anything.
 *
 * <pre>{@code
 * java -cp "bench/target/classes:cli/target/lib/*" org.openjdk.jmh.Main Encoder -f 1 -wi 2 -w 1 -i 3 -r 1
 * java -cp "bench/target/classes:cli/target/lib/*" io.switchboard.bench.jmh.EncoderBenchmark   # bytes table
 * }</pre>
 */
@State(Scope.Thread)
@BenchmarkMode(Mode.AverageTime)
@OutputTimeUnit(TimeUnit.MICROSECONDS)
@Warmup(iterations = 3, time = 2)
@Measurement(iterations = 5, time = 2)
@Fork(value = 1, jvmArgsAppend = {"-Xms2g", "-Xmx2g", "-XX:+UseG1GC"})
public class EncoderBenchmark {
    /** The benchmark payloads: double[] of 10 to 10^6 values, LinkEntry lists of 10 to 10^5 nodes. */
    static final List<String> PAYLOADS = List.of("doubles:10", "doubles:1000", "doubles:100000", "doubles:1000000",
            "list:10", "list:1000", "list:100000");
    private static final int MAX_NODES = 2_000_000;
    private static final XMLOutputFactory XML_OUT = XMLOutputFactory.newFactory();
    private static final XMLInputFactory XML_IN = SecureXml.inputFactory();

    @Param({"doubles:10", "doubles:1000", "doubles:100000", "doubles:1000000", "list:10", "list:1000", "list:100000"})
    public String payload;

    private final XmlMessages xml = new XmlMessages(EchoComponent.DESCRIPTOR, MAX_NODES);
    private final ProtoCodec codec = EchoComponent.DESCRIPTOR.codec(ProtoCodec.class);
    private Payloads.Message message;
    private Class<?> requestType;
    private String element;
    private ByteArrayOutputStream buffer;
    private byte[] xmlBytes;
    private byte[] protobufBytes;
    private byte[] javaBytes;          // null when Java serialization overflowed the stack
    private String javaFailure;

    @Setup
    public void setUp() throws Exception {
        message = Payloads.message(payload);
        requestType = message.request().getClass();
        element = element(message.request());
        xmlBytes = xml(xml, message.request());
        protobufBytes = codec.toBytes(element, message.request(), MAX_NODES);
        buffer = new ByteArrayOutputStream(Math.max(xmlBytes.length, protobufBytes.length) + 64);
        try {
            javaBytes = java(message.javaValue());
        } catch (StackOverflowError e) {
            javaFailure = "Java serialization overflowed the stack on " + payload + " (it recurses once per node)";
        }
    }

    @Benchmark
    public int xmlWrite() throws JAXBException, XMLStreamException {
        buffer.reset();
        XMLStreamWriter out = XML_OUT.createXMLStreamWriter(buffer, "UTF-8");
        xml.write(message.request(), out);
        out.flush();
        return buffer.size();
    }

    @Benchmark
    public Object xmlRead() throws JAXBException, XMLStreamException {
        XMLStreamReader in = XML_IN.createXMLStreamReader(new ByteArrayInputStream(xmlBytes));
        in.nextTag();
        return xml.read(in, requestType);
    }

    @Benchmark
    public byte[] protobufWrite() {
        return codec.toBytes(element, message.request(), MAX_NODES);
    }

    @Benchmark
    public Object protobufRead() {
        return codec.fromBytes(element, protobufBytes, MessageLimits.unlimited());
    }

    @Benchmark
    public int javaWrite() throws IOException {
        if (javaFailure != null) {
            throw new IllegalStateException(javaFailure);
        }
        buffer.reset();
        try (ObjectOutputStream out = new ObjectOutputStream(buffer)) {
            out.writeObject(message.javaValue());
        }
        return buffer.size();
    }

    @Benchmark
    public Object javaRead() throws IOException, ClassNotFoundException {
        if (javaFailure != null) {
            throw new IllegalStateException(javaFailure);
        }
        try (ObjectInputStream in = new ObjectInputStream(new ByteArrayInputStream(javaBytes))) {
            return in.readObject();
        } catch (StackOverflowError e) {
            // reading recurses too, and needs more stack per node than writing did
            throw new IllegalStateException("Java deserialization overflowed the stack on " + payload);
        }
    }

    /** The element name of an echo request bean. */
    static String element(Object request) {
        return EchoComponent.DESCRIPTOR.operations().stream().filter(op -> op.requestClass() == request.getClass())
                .findFirst().orElseThrow().requestElement().getLocalPart();
    }

    static byte[] xml(XmlMessages xml, Object message) throws JAXBException, XMLStreamException {
        ByteArrayOutputStream bytes = new ByteArrayOutputStream();
        XMLStreamWriter out = XML_OUT.createXMLStreamWriter(bytes, "UTF-8");
        xml.write(message, out);
        out.flush();
        return bytes.toByteArray();
    }

    static byte[] java(Object value) throws IOException {
        ByteArrayOutputStream bytes = new ByteArrayOutputStream();
        try (ObjectOutputStream out = new ObjectOutputStream(bytes)) {
            out.writeObject(value);
        }
        return bytes.toByteArray();
    }

    /** Prints the bytes of one message per encoding and payload (a Markdown table); times nothing. */
    public static void main(String[] args) throws Exception {
        PrintStream o = System.out;
        XmlMessages xml = new XmlMessages(EchoComponent.DESCRIPTOR, MAX_NODES);
        ProtoCodec codec = EchoComponent.DESCRIPTOR.codec(ProtoCodec.class);
        o.println("| payload | XML (SOAP body) | protobuf (gRPC) | Java serialization | XML / protobuf |");
        o.println("| --- | ---: | ---: | ---: | ---: |");
        for (String p : args.length > 0 ? List.of(args) : PAYLOADS) {
            Payloads.Message m = Payloads.message(p);
            long x = xml(xml, m.request()).length;
            long b = codec.toBytes(element(m.request()), m.request(), MAX_NODES).length;
            String j;
            try {
                j = perElement(java(m.javaValue()).length, m.size());
            } catch (StackOverflowError e) {
                j = "StackOverflowError";
            }
            o.printf(Locale.ROOT, "| %s | %s | %s | %s | %.1f |%n", p, perElement(x, m.size()), perElement(b, m.size()), j,
                    (double) x / b);
        }
        o.println("(bytes per message; per element in parentheses. XML is the operation's body element, without the SOAP envelope.)");
    }

    private static String perElement(long bytes, int n) {
        return n == 0 ? Long.toString(bytes) : String.format(Locale.ROOT, "%,d (%.1f)", bytes, (double) bytes / n);
    }
}
