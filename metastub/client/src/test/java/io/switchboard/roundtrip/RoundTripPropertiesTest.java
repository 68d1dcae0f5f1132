package io.switchboard.roundtrip;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.switchboard.idl.FieldModel;
import io.switchboard.idl.ScalarType;
import io.switchboard.idl.SecureXml;
import io.switchboard.codec.Graphs;
import io.switchboard.idl.runtime.OperationDescriptor;
import io.switchboard.idl.runtime.ServiceDescriptor;
import io.switchboard.codec.XmlCodec;
import io.switchboard.codec.XmlMessages;
import io.switchboard.codec.message.MessageLimits;
import io.switchboard.codec.proto.ProtoCodec;
import io.switchboard.codec.message.WireFormatException;
import io.switchboard.codec.dynamic.DynamicInterface;
import io.switchboard.codec.dynamic.DynamicRecord;
import io.switchboard.protocol.CallOptions;
import io.switchboard.protocol.ClientSettings;
import io.switchboard.client.DynamicStub;
import io.switchboard.protocol.Endpoint;
import io.switchboard.protocol.spi.ProtocolClient;
import io.switchboard.protocol.spi.ProtocolServer;
import io.switchboard.protocol.spi.Protocols;
import io.switchboard.protocol.RefusedException;
import io.switchboard.protocol.ServerSettings;
import io.switchboard.protocol.spi.Transport;
import io.switchboard.protocol.WireBytes;
import jakarta.xml.bind.JAXBException;
import java.io.ByteArrayInputStream;
import java.lang.reflect.InvocationTargetException;
import java.lang.reflect.Method;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Random;
import javax.xml.stream.XMLInputFactory;
import javax.xml.stream.XMLStreamException;
import javax.xml.stream.XMLStreamReader;
import net.jqwik.api.Arbitraries;
import net.jqwik.api.Arbitrary;
import net.jqwik.api.ForAll;
import net.jqwik.api.Property;
import net.jqwik.api.Provide;
import net.jqwik.api.constraints.IntRange;
import net.jqwik.api.lifecycle.AddLifecycleHook;
import net.jqwik.api.lifecycle.AfterContainer;
import net.jqwik.api.lifecycle.BeforeContainer;
import net.jqwik.api.statistics.Statistics;

/**
 * Every value exact or refused, as properties over interfaces made at random:
 * <ul>
 *   <li>a request of any value goes over {@code soap}, {@code grpc} and {@code local}, through the
 *       generated stub and through a {@link DynamicStub}, and comes back equal ({@link Same}), or
 *       is refused before anything is sent: a {@link RefusedException} naming a field, no byte
 *       counted on the wire, the component not run; and it is refused exactly when the test's own
 *       {@link Validity} says no protocol may carry it;</li>
 *   <li>valid messages with a bit flipped, cut short, or with an integer out of its type's range,
 *       read by the generated and the dynamic reader of each form (SOAP's XML; the protobuf of gRPC,
 *       which {@code local} copies through): XML is refused, or decoded to valid values that differ
 *       from the original only in the field the mutation hit; protobuf, which has no end marker and
 *       skips what it does not know, is refused or read to the same values by both readers; and
 *       both readers decide alike.</li>
 * </ul>
 * The schemas are compiled at test time (interface compiler and javac in this JVM), so random
 * schemas get generated code too; one javac run compiles the whole batch. Seed and tries:
 * {@link PropertySettings}.
 */
@AddLifecycleHook(PropertySettings.class)
class RoundTripPropertiesTest {
    private static final int SCHEMAS = 8;
    private static final int MAX_NODES = 10_000;
    private static final List<String> PROTOCOLS = List.of("soap", "grpc", "local");
    private static final XMLInputFactory INPUT = SecureXml.inputFactory();

    private static Path dir;
    private static CompiledInterfaces compiled;
    private static final List<Iface> IFACES = new ArrayList<>();
    private static final Map<String, ProtocolServer> SERVERS = new LinkedHashMap<>();
    private static final Map<String, ProtocolClient> CLIENTS = new LinkedHashMap<>();
    private static long schemaSeed;

    /** One random interface, served on every protocol, with a generated and a dynamic client on each. */
    static final class Iface {
        RandomSchemas.Schema schema;
        ServiceDescriptor generated;
        DynamicInterface dynamic;
        Beans beans;
        /** Made once: jqwik memoizes generators per arbitrary, so fresh ones per try would pile up in memory. */
        Arbitrary<Case> cases;
        MirrorSkeleton skeleton;
        XmlMessages generatedXml;
        XmlCodec dynamicXml;
        final Map<String, Transport> generatedTransports = new HashMap<>();
        final Map<String, Transport> dynamicTransports = new HashMap<>();
    }

    /** One try: an interface and a request message for its {@code echo}. */
    record Case(Iface iface, DynamicRecord request) {
        @Override
        public String toString() {
            return Canon.describe(iface.schema, schemaSeed, request);
        }
    }

    @BeforeContainer
    static void start() throws Exception {
        String seed = PropertySettings.seed();
        schemaSeed = seed != null ? Long.parseLong(seed) : new Random().nextLong();
        System.out.println("round-trip properties: schemas from seed " + schemaSeed);
        List<RandomSchemas.Schema> schemas = RandomSchemas.make(schemaSeed, SCHEMAS);
        dir = Files.createTempDirectory("roundtrip");
        compiled = CompiledInterfaces.compile(schemas, dir);
        ServerSettings server = ServerSettings.defaults().withBindAddress("127.0.0.1").withPort(0).withMaxGraphNodes(MAX_NODES);
        ClientSettings client = new ClientSettings(ClientSettings.defaults().connectTimeout(),
                ClientSettings.defaults().callTimeout(), ClientSettings.defaults().maxMessageBytes(), MAX_NODES);
        for (String p : PROTOCOLS) {
            SERVERS.put(p, Protocols.get(p).newServer(server));
            CLIENTS.put(p, Protocols.get(p).newClient(client));
        }
        for (RandomSchemas.Schema s : schemas) {
            Iface i = new Iface();
            i.schema = s;
            i.generated = compiled.descriptor(s);
            i.dynamic = DynamicInterface.fromSchema(s.xsd());   // what a client without generated code builds
            i.beans = new Beans(i.dynamic, compiled, s);
            i.cases = new MessageValues(i.dynamic).request("echo").map(r -> new Case(i, r));
            i.skeleton = new MirrorSkeleton(i.generated);
            i.generatedXml = new XmlMessages(i.generated, MAX_NODES);
            i.dynamicXml = XmlCodec.of(i.dynamic.descriptor(), MAX_NODES);
            for (String p : PROTOCOLS) {
                Endpoint at = SERVERS.get(p).export(i.skeleton);
                i.generatedTransports.put(p, CLIENTS.get(p).connect(i.generated, at));
                i.dynamicTransports.put(p, CLIENTS.get(p).connect(i.dynamic.descriptor(), at));
            }
            IFACES.add(i);
        }
    }

    @AfterContainer
    static void stop() throws Exception {
        for (Iface i : IFACES) {
            i.generatedTransports.values().forEach(Transport::close);
            i.dynamicTransports.values().forEach(Transport::close);
        }
        CLIENTS.values().forEach(ProtocolClient::close);
        SERVERS.values().forEach(ProtocolServer::close);
        CompiledInterfaces.closeAndDelete(compiled, dir);
    }

    @Provide
    Arbitrary<Case> messages() {
        return Arbitraries.oneOf(IFACES.stream().map(i -> i.cases).toList());
    }

    @Provide
    Arbitrary<Case> validMessages() {
        return messages().filter(c -> Validity.problem(c.request()) == null);
    }

    // ---- round trips over every protocol

    @Property(tries = 400)
    void everyValueComesBackEqualOrIsRefusedBeforeItIsSent(@ForAll("messages") Case c) throws Exception {
        String problem = Validity.problem(c.request());
        Statistics.label("outcome").collect(problem == null ? "carried" : "refused");
        Statistics.label("refused for").collect(problem == null ? "-" : problem.replaceAll(" .*", ""));
        Statistics.label("linked nodes").collect(Canon.sharesNodes(c.request()) ? "shared or cyclic"
                : Canon.nodes(c.request()).isEmpty() ? "none" : "a tree");
        // the generators must reach both outcomes and the shapes that break encoders, or the property proves little
        Statistics.label("outcome").coverage(k -> {
            k.check("carried").percentage(p -> p >= 50);
            k.check("refused").percentage(p -> p >= 2);
        });
        Statistics.label("linked nodes").coverage(k -> k.check("shared or cyclic").percentage(p -> p >= 5));
        for (String protocol : PROTOCOLS) {
            for (boolean generatedStub : new boolean[] {true, false}) {
                String what = protocol + (generatedStub ? ", generated stub" : ", dynamic stub");
                int before = c.iface().skeleton.calls.get();
                WireBytes wire = new WireBytes();
                DynamicRecord back;
                try {
                    back = generatedStub ? callGenerated(c, protocol, wire) : callDynamic(c, protocol, wire);
                } catch (RefusedException e) {
                    assertNotNull(problem, what + ": refused a value every protocol can carry: " + e.getMessage());
                    assertEquals("malformed", e.reason(), what + ": " + e.getMessage());
                    assertNotNull(e.field(), what + ": the refusal names no field: " + e.getMessage());
                    assertTrue(wire.sent() <= 0, what + ": refused after sending " + wire.sent() + " bytes");
                    assertEquals(before, c.iface().skeleton.calls.get(), what + ": the component ran a refused call");
                    continue;
                }
                assertNull(problem, what + ": sent a value no protocol may carry (" + problem + ")");
                assertEquals(before + 1, c.iface().skeleton.calls.get(), what + ": the component ran once");
                String difference = Same.difference(c.request(), back);
                assertNull(difference, what + ": came back changed: " + difference);
            }
        }
    }

    private static DynamicRecord callGenerated(Case c, String protocol, WireBytes wire) throws Exception {
        Iface i = c.iface();
        Object request = i.beans.toBean(c.request());
        Object stub = compiled.stub(i.schema, i.generatedTransports.get(protocol));
        stub = stub.getClass().getMethod("withOptions", CallOptions.class).invoke(stub,
                CallOptions.DEFAULT.withWireBytes(wire));
        List<FieldModel> fields = c.request().type().model().fields();
        Method echo = null;
        for (Method m : stub.getClass().getMethods()) {
            if (m.getName().equals("echo")) {
                echo = m;
            }
        }
        assertNotNull(echo, "the generated stub has an echo method");
        Object[] args = new Object[fields.size()];
        for (int k = 0; k < args.length; k++) {
            args[k] = request.getClass().getMethod(getter(fields.get(k))).invoke(request);
        }
        Object result;
        try {
            result = echo.invoke(stub, args);
        } catch (InvocationTargetException e) {
            if (e.getCause() instanceof Exception cause) {
                throw cause;
            }
            throw e;
        }
        // the stub returns the only field of the response, or the whole response for several
        Object response;
        if (fields.size() == 1) {
            response = compiled.beanClass(i.schema, "echoResponse").getConstructor().newInstance();
            for (Method m : response.getClass().getMethods()) {
                if (m.getName().equals("set" + getter(fields.get(0)).substring(3))) {
                    m.invoke(response, result);
                }
            }
        } else {
            response = result;
        }
        return i.beans.fromBean(response);
    }

    private static DynamicRecord callDynamic(Case c, String protocol, WireBytes wire) throws Exception {
        Iface i = c.iface();
        DynamicStub stub = new DynamicStub(i.dynamic, i.dynamicTransports.get(protocol))
                .withOptions(CallOptions.DEFAULT.withWireBytes(wire));
        return stub.call(c.request());
    }

    private static String getter(FieldModel f) {
        return "get" + Character.toUpperCase(f.name().charAt(0)) + f.name().substring(1);
    }

    // ---- mutations of SOAP's XML

    @Property(tries = 1000)
    void xmlBitFlipsAreRefusedOrChangeOnlyTheFlippedField(@ForAll("validMessages") Case c,
            @ForAll @IntRange(min = 0, max = 1 << 20) int where, @ForAll @IntRange(min = 0, max = 7) int bit)
            throws Exception {
        String original = c.iface().generatedXml.toXml(c.iface().beans.toBean(c.request()));
        byte[] bytes = original.getBytes(StandardCharsets.UTF_8);
        int at = where % bytes.length;
        bytes[at] ^= (byte) (1 << bit);
        int charAt = new String(bytes, 0, at, StandardCharsets.UTF_8).length();
        Decoded d = readXmlBoth(c, bytes);
        Statistics.label("flipped XML").collect(d.refused() ? "refused" : "read");
        Statistics.label("flipped XML").coverage(k -> {
            k.check("refused").percentage(p -> p >= 50);
            k.check("read").percentage(p -> p >= 1);
        });
        if (d.refused()) {
            return;
        }
        Leaf leaf = Leaf.containing(original, charAt);
        for (String again : new String[] {
            c.iface().generatedXml.toXml(c.iface().beans.toBean(d.generated())), writeDynamic(c, d.dynamic())}) {
            int prefix = 0;
            while (prefix < original.length() && prefix < again.length() && original.charAt(prefix) == again.charAt(prefix)) {
                prefix++;
            }
            if (prefix == original.length() && prefix == again.length()) {
                continue;   // the flip changed nothing a reader sees (an exponent's 'E' to 'e', say)
            }
            int suffix = 0;
            while (suffix < original.length() - prefix && suffix < again.length() - prefix
                    && original.charAt(original.length() - 1 - suffix) == again.charAt(again.length() - 1 - suffix)) {
                suffix++;
            }
            assertNotNull(leaf, "a flip at character " + charAt + ", outside every value, was accepted:\n" + original
                    + "\nread back as\n" + again);
            boolean inLeaf = prefix >= leaf.start() && original.length() - suffix <= leaf.end();
            // a node id in a reference that now names another node: the graph's shape changed, by that field
            assertTrue(inLeaf || leaf.reference(), "a flip inside " + original.substring(leaf.start(), leaf.end())
                    + " changed more than that field:\n" + original + "\nread back as\n" + again);
        }
    }

    @Property(tries = 300)
    void truncatedXmlIsRefused(@ForAll("validMessages") Case c, @ForAll @IntRange(min = 0, max = 1 << 20) int where)
            throws Exception {
        byte[] bytes = c.iface().generatedXml.toXml(c.iface().beans.toBean(c.request())).getBytes(StandardCharsets.UTF_8);
        byte[] cut = java.util.Arrays.copyOf(bytes, where % bytes.length);
        assertTrue(readXmlBoth(c, cut).refused(), "a message cut at byte " + cut.length + " of " + bytes.length
                + " was read");
    }

    @Property(tries = 500)
    void integersOutOfRangeAreRefusedNamingTheElement(@ForAll("validMessages") Case c, @ForAll int pick,
            @ForAll boolean above) throws Exception {
        List<Object[]> slots = new ArrayList<>();
        integerFields(c.request(), slots, new java.util.IdentityHashMap<>());
        if (slots.isEmpty()) {
            return;
        }
        Object[] slot = slots.get(Math.floorMod(pick, slots.size()));
        DynamicRecord owner = (DynamicRecord) slot[0];
        FieldModel f = (FieldModel) slot[1];
        // a marker value in range, then swapped in the text for one just outside it
        long marker = switch (f.scalar()) {
            case BYTE -> 101;
            case SHORT -> 30101;
            case INT -> 2_000_101_101;
            default -> 9_000_000_000_101_101_101L;
        };
        Object saved = owner.get(f.name());
        owner.set(f.name(), f.repeated() ? array(f.scalar(), marker) : box(f.scalar(), marker));
        String xml;
        try {
            xml = c.iface().generatedXml.toXml(c.iface().beans.toBean(c.request()));
        } finally {
            owner.set(f.name(), saved);
        }
        String outside = switch (f.scalar()) {
            case BYTE -> above ? "128" : "-129";
            case SHORT -> above ? "32768" : "-32769";
            case INT -> above ? "2147483648" : "-2147483649";
            default -> above ? "9223372036854775808" : "-9223372036854775809";
        };
        String text = "<" + f.name() + ">" + marker + "</" + f.name() + ">";
        int at = xml.indexOf(text);
        assertTrue(at >= 0, "the marker is in the message: " + xml);
        byte[] bad = (xml.substring(0, at) + "<" + f.name() + ">" + outside + "</" + f.name() + ">"
                + xml.substring(at + text.length())).getBytes(StandardCharsets.UTF_8);
        for (XmlCodec codec : new XmlCodec[] {c.iface().generatedXml, c.iface().dynamicXml}) {
            JAXBException e = org.junit.jupiter.api.Assertions.assertThrows(JAXBException.class,
                    () -> readXml(codec, c, bad), "xs:" + f.scalar().xsdName() + " " + outside + " was read");
            assertTrue(e instanceof io.switchboard.codec.MalformedXmlException m
                    && m.path().endsWith("/" + f.name()) && m.problem().contains("outside the range of xs:"
                    + f.scalar().xsdName()), "refused without naming " + f.name() + ": " + e.getMessage());
        }
    }

    /** Single integer fields and integer lists, with their records: where an out-of-range value can go. */
    private static void integerFields(Object v, List<Object[]> out, java.util.IdentityHashMap<Object, Boolean> seen) {
        if (v instanceof DynamicRecord r) {
            if (seen.put(r, true) != null) {
                return;
            }
            if (r.type().model().ndArray()) {
                return;   // its shape must stay consistent
            }
            for (FieldModel f : r.type().model().fields()) {
                ScalarType s = f.scalar();
                if (s == ScalarType.BYTE || s == ScalarType.SHORT || s == ScalarType.INT || s == ScalarType.LONG) {
                    out.add(new Object[] {r, f});
                }
                integerFields(r.get(f.name()), out, seen);
            }
        } else if (v instanceof List<?> list) {
            for (Object item : list) {
                integerFields(item, out, seen);
            }
        }
    }

    private static Object box(ScalarType s, long v) {
        return switch (s) {
            case BYTE -> (byte) v;
            case SHORT -> (short) v;
            case INT -> (int) v;
            default -> v;
        };
    }

    private static Object array(ScalarType s, long v) {
        return switch (s) {
            case BYTE -> new byte[] {(byte) v};
            case SHORT -> new short[] {(short) v};
            case INT -> new int[] {(int) v};
            default -> new long[] {v};
        };
    }

    /** What each reader made of a message: both refused, or both read (readers that disagree fail the property). */
    record Decoded(DynamicRecord generated, DynamicRecord dynamic) {
        boolean refused() {
            return generated == null;
        }
    }

    private static Decoded readXmlBoth(Case c, byte[] bytes) throws Exception {
        Object generated = readXml(c.iface().generatedXml, c, bytes, true);
        Object dynamic = readXml(c.iface().dynamicXml, c, bytes, true);
        assertEquals(generated == null, dynamic == null, "the generated and the dynamic reader disagree on "
                + new String(bytes, StandardCharsets.UTF_8) + ": generated " + (generated == null ? "refused" : "read")
                + " it, dynamic " + (dynamic == null ? "refused" : "read") + " it");
        if (generated == null) {
            return new Decoded(null, null);
        }
        DynamicRecord g = c.iface().beans.fromBean(generated);
        String difference = Same.difference(g, (DynamicRecord) dynamic);
        assertNull(difference, "the generated and the dynamic reader read different values: " + difference);
        return new Decoded(g, (DynamicRecord) dynamic);
    }

    private static Object readXml(XmlCodec codec, Case c, byte[] bytes) throws Exception {
        XMLStreamReader in = INPUT.createXMLStreamReader(new ByteArrayInputStream(bytes));
        in.nextTag();
        Class<?> type = codec == c.iface().generatedXml ? c.iface().generated.operation("echo").requestClass()
                : DynamicRecord.class;
        return codec.read(in, type);
    }

    /** The value read, or null when refused the documented ways; anything else fails the property. */
    private static Object readXml(XmlCodec codec, Case c, byte[] bytes, boolean nullWhenRefused) throws Exception {
        try {
            return readXml(codec, c, bytes);
        } catch (JAXBException | XMLStreamException | Graphs.GraphLimitException | XmlMessages.ListDepthException e) {
            return null;
        } catch (RuntimeException e) {
            if (e.getCause() instanceof XMLStreamException) {
                return null;   // Woodstox reports malformed bytes met while reading lazily this way
            }
            throw e;
        }
    }

    private static String writeDynamic(Case c, DynamicRecord message) throws Exception {
        java.io.StringWriter w = new java.io.StringWriter();
        var out = javax.xml.stream.XMLOutputFactory.newFactory().createXMLStreamWriter(w);
        c.iface().dynamicXml.write(message, out);
        out.flush();
        return w.toString();
    }

    /** One value's element in a message's text: [start, end) from its start tag to its end tag. */
    record Leaf(int start, int end, boolean reference) {
        /** The innermost element holding only text that contains {@code charAt}, or null. */
        static Leaf containing(String xml, int charAt) throws XMLStreamException {
            XMLStreamReader in = INPUT.createXMLStreamReader(new java.io.StringReader(xml));
            java.util.ArrayDeque<int[]> open = new java.util.ArrayDeque<>();
            Leaf found = null;
            while (in.hasNext()) {
                int event = in.next();
                int offset = in.getLocation().getCharacterOffset();
                if (event == XMLStreamReader.START_ELEMENT) {
                    if (!open.isEmpty()) {
                        open.peek()[1] = 1;   // has a child: not a leaf
                    }
                    open.push(new int[] {offset, 0});
                } else if (event == XMLStreamReader.END_ELEMENT) {
                    int[] e = open.pop();
                    int end = xml.indexOf('>', offset) + 1;
                    if (e[1] == 0 && charAt >= e[0] && charAt < end) {
                        String text = xml.substring(xml.indexOf('>', e[0]) + 1, offset);
                        found = new Leaf(e[0], end, text.matches("n[0-9]+"));
                    }
                }
            }
            return found;
        }
    }

    // ---- mutations of the protobuf form (gRPC; local copies through it)

    @Property(tries = 1500)
    void protobufBitFlipsAreRefusedOrReadAlikeByBothReaders(@ForAll("validMessages") Case c,
            @ForAll @IntRange(min = 0, max = 1 << 20) int where, @ForAll @IntRange(min = 0, max = 7) int bit) {
        byte[] bytes = protobuf(c);
        if (bytes.length == 0) {
            return;   // an empty message: no bit to flip
        }
        int at = where % bytes.length;
        bytes[at] ^= (byte) (1 << bit);
        DynamicRecord back = readProtobufBoth(c, bytes);
        Statistics.label("flipped protobuf").collect(back == null ? "refused" : "read");
        Statistics.label("flipped protobuf").coverage(k -> {
            k.check("refused").percentage(p -> p >= 5);
            k.check("read").percentage(p -> p >= 5);
        });
    }

    @Property(tries = 300)
    void truncatedProtobufIsRefusedOrReadAlikeByBothReaders(@ForAll("validMessages") Case c,
            @ForAll @IntRange(min = 0, max = 1 << 20) int where) {
        byte[] bytes = protobuf(c);
        byte[] cut = java.util.Arrays.copyOf(bytes, bytes.length == 0 ? 0 : where % bytes.length);
        DynamicRecord back = readProtobufBoth(c, cut);
        Statistics.label("truncated protobuf").collect(back == null ? "refused" : "read");
        Statistics.label("truncated protobuf").coverage(k -> k.check("refused").percentage(p -> p >= 5));
    }

    /** The request as the dynamic codec writes it, which is what the generated one writes too. */
    private static byte[] protobuf(Case c) {
        Iface i = c.iface();
        byte[] dynamic = i.dynamic.descriptor().codec(ProtoCodec.class).toBytes("echo", c.request(), MAX_NODES);
        assertTrue(java.util.Arrays.equals(dynamic, i.generated.codec(ProtoCodec.class).toBytes("echo",
                i.beans.toBean(c.request()), MAX_NODES)), "the generated and the dynamic codec write other bytes");
        return dynamic;
    }

    /** The generated and the dynamic codec's reading: both refuse (null), or both read the same value. */
    private static DynamicRecord readProtobufBoth(Case c, byte[] bytes) {
        Iface i = c.iface();
        MessageLimits limits = MessageLimits.of(1 << 20, MAX_NODES);
        Object generated;
        DynamicRecord dynamic;
        WireFormatException generatedRefusal = null;
        WireFormatException dynamicRefusal = null;
        try {
            generated = i.generated.codec(ProtoCodec.class).fromBytes("echo", bytes, limits);
        } catch (WireFormatException e) {
            generated = null;
            generatedRefusal = e;
        }
        try {
            dynamic = (DynamicRecord) i.dynamic.descriptor().codec(ProtoCodec.class).fromBytes("echo", bytes, limits);
        } catch (WireFormatException e) {
            dynamic = null;
            dynamicRefusal = e;
        }
        assertEquals(generated == null, dynamic == null, "the generated and the dynamic protobuf reader disagree: generated "
                + (generated == null ? "refused (" + generatedRefusal.getMessage() + ")" : "read") + ", dynamic "
                + (dynamic == null ? "refused (" + dynamicRefusal.getMessage() + ")" : "read"));
        if (generated == null) {
            return null;
        }
        String difference = Same.difference(i.beans.fromBean(generated), dynamic);
        assertNull(difference, "the generated and the dynamic protobuf reader read different values: " + difference);
        return dynamic;
    }
}
