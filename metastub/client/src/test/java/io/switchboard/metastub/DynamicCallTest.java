package io.switchboard.metastub;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import io.switchboard.codec.XmlCodec;
import io.switchboard.codec.XmlMessages;
import io.switchboard.codec.message.MessageLimits;
import io.switchboard.codec.proto.ProtoCodec;
import io.switchboard.codec.dynamic.DynamicFault;
import io.switchboard.codec.dynamic.DynamicInterface;
import io.switchboard.idl.runtime.HeterogeneousList;
import io.switchboard.codec.dynamic.DynamicList;
import io.switchboard.codec.dynamic.DynamicRecord;
import io.switchboard.protocol.CallOptions;
import io.switchboard.client.DynamicStub;
import io.switchboard.protocol.Endpoint;
import io.switchboard.protocol.spi.ProtocolServer;
import io.switchboard.protocol.spi.Protocols;
import io.switchboard.protocol.RemoteInvocationException;
import io.switchboard.protocol.ServerSettings;
import io.switchboard.protocol.Skeleton;
import io.switchboard.testing.UnusedPorts;
import io.switchboard.testing.conformance.ConformanceComponent;
import io.switchboard.testing.conformance.ConformanceImpl;
import io.switchboard.testing.conformance.DivideFaultException;
import io.switchboard.testing.conformance.EchoDoubles;
import io.switchboard.testing.conformance.EchoList;
import io.switchboard.testing.conformance.EchoMixed;
import io.switchboard.testing.conformance.EchoRecord;
import io.switchboard.testing.conformance.EchoTensor;
import io.switchboard.testing.conformance.LinkEntry;
import io.switchboard.testing.conformance.Mixed;
import io.switchboard.testing.conformance.Record;
import io.switchboard.testing.conformance.Tensor;
import io.switchboard.testing.conformance.Values;
import io.switchboard.testing.CountingSkeleton;
import java.io.StringWriter;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.atomic.AtomicInteger;
import javax.xml.stream.XMLOutputFactory;
import javax.xml.stream.XMLStreamWriter;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * A client without generated code ({@link DynamicStub} over a meta-stub on the conformance
 * schema) calls a generated component over real SOAP and gRPC servers on loopback: the answers
 * are those the generated stub gets, byte for byte in the SOAP form, and each call puts the same
 * number of bytes on the wire as the generated stub's; policies, the failsafe and call records
 * work as for generated stubs; faults arrive as declared faults; bad input is refused by name
 * before anything is sent. Also: the bytes each transport records for a known message.
 */
class DynamicCallTest {
    private final ConformanceImpl impl = new ConformanceImpl();
    private final Map<String, AtomicInteger> served = new ConcurrentHashMap<>();
    private final List<CallRecord> calls = new CopyOnWriteArrayList<>();
    private final List<ProtocolServer> servers = new ArrayList<>();
    private final List<MetaStub> channels = new ArrayList<>();
    private final DynamicInterface dynamic = DynamicInterface.fromSchema(ConformanceComponent.DESCRIPTOR.schema());
    private final XmlMessages generatedXml = new XmlMessages(ConformanceComponent.DESCRIPTOR, 2_000_000);
    private final XmlCodec dynamicXml = XmlCodec.of(dynamic.descriptor(), 2_000_000);
    private List<Endpoint> both;

    @BeforeEach
    void start() {
        Skeleton skeleton = ConformanceComponent.skeleton(impl);
        both = List.of(export("grpc", skeleton), export("soap", skeleton));
    }

    @AfterEach
    void stop() {
        channels.forEach(MetaStub::close);
        servers.forEach(ProtocolServer::close);
    }

    private Endpoint export(String protocol, Skeleton skeleton) {
        ProtocolServer s = Protocols.get(protocol).newServer(ServerSettings.defaults());
        servers.add(s);
        return s.export(new CountingSkeleton(skeleton, protocol, served, label -> { }));
    }

    private MetaStub channel(io.switchboard.idl.runtime.ServiceDescriptor d, List<Endpoint> endpoints, SelectionPolicy p,
                             CallListener... more) {
        MetaStub.Builder b = MetaStub.builder(d).protocols("grpc", "soap").endpoints(endpoints).policy(p)
                .listener(calls::add);
        for (CallListener l : more) {
            b.listener(l);
        }
        MetaStub m = b.build();
        channels.add(m);
        return m;
    }

    private int served(String protocol) {
        AtomicInteger n = served.get(protocol);
        return n == null ? 0 : n.get();
    }

    private static CallOptions pinned(String protocol) {
        return CallOptions.DEFAULT.with(MetaStub.PROTOCOL, protocol);
    }

    /** The same values as a request record: the generated bean's bytes read by the dynamic codec. */
    private DynamicRecord asRecord(Object bean, String element) {
        byte[] bytes = ConformanceComponent.DESCRIPTOR.codec(ProtoCodec.class).toBytes(element, bean, 2_000_000);
        return (DynamicRecord) dynamic.descriptor().codec(ProtoCodec.class).fromBytes(element, bytes, MessageLimits.unlimited());
    }

    private String xml(Object message, boolean generated) throws Exception {
        if (generated) {
            return generatedXml.toXml(message);
        }
        StringWriter w = new StringWriter();
        XMLStreamWriter out = XMLOutputFactory.newFactory().createXMLStreamWriter(w);
        dynamicXml.write(message, out);
        out.flush();
        return w.toString();
    }

    /**
     * Calls {@code operation} over {@code protocol} with the generated stub's channel and the dynamic
     * one; the answers must be the same message, and both calls the same bytes on the wire.
     */
    private DynamicRecord sameAsGenerated(String protocol, String operation, Object requestBean) throws Exception {
        MetaStub generated = channel(ConformanceComponent.DESCRIPTOR, both, new AdaptivePolicy());
        MetaStub dyn = channel(dynamic.descriptor(), both, new AdaptivePolicy());
        calls.clear();
        Object expected = generated.call(ConformanceComponent.DESCRIPTOR.operation(operation), requestBean,
                pinned(protocol));
        DynamicRecord request = asRecord(requestBean, operation);
        DynamicRecord actual = new DynamicStub(dynamic, dyn).withOptions(pinned(protocol)).call(request);
        assertEquals(xml(expected, true), xml(actual, false), operation + " over " + protocol);
        assertEquals(2, calls.size());
        CallRecord g = calls.get(0);
        CallRecord d = calls.get(1);
        assertEquals(protocol, d.protocol());
        assertTrue(g.requestWireBytes() > 0 && g.responseWireBytes() > 0, g.toString());
        assertEquals(g.requestWireBytes(), d.requestWireBytes(), operation + " over " + protocol + ": request bytes");
        assertEquals(g.responseWireBytes(), d.responseWireBytes(), operation + " over " + protocol + ": response bytes");
        return actual;
    }

    @Test
    void everyShapeComesBackAsTheGeneratedStubGetsItOverSoapAndGrpc() throws Exception {
        LinkEntry cycle = Values.list(5);
        cycle.getNextLink().getNextLink().getNextLink().getNextLink().setNextLink(cycle.getNextLink());
        for (String protocol : List.of("soap", "grpc")) {
            for (double[] values : new double[][] {Values.EDGE_DOUBLES.clone(), new double[0], null}) {
                EchoDoubles m = new EchoDoubles();
                m.setValues(values);
                DynamicRecord back = sameAsGenerated(protocol, "echoDoubles", m);
                Values.assertSameDoubles(values, (double[]) back.get("values"));
            }
            for (Record r : new Record[] {Values.fullRecord(), Values.emptyRecord(), null}) {
                EchoRecord m = new EchoRecord();
                m.setRecord(r);
                sameAsGenerated(protocol, "echoRecord", m);
            }
            for (LinkEntry head : new LinkEntry[] {cycle, Values.list(10_000), null}) {
                EchoList m = new EchoList();
                m.setHead(head);
                sameAsGenerated(protocol, "echoList", m);
            }
            Record markup = Values.emptyRecord();
            markup.setName("<a> & \"b\" ]]> c>d");
            EchoRecord withMarkup = new EchoRecord();
            withMarkup.setRecord(markup);
            sameAsGenerated(protocol, "echoRecord", withMarkup);
            EchoTensor t = new EchoTensor();
            t.setTensor(Tensor.of(new double[][] {{1, Double.NaN}, {-0.0, Double.POSITIVE_INFINITY}}));
            sameAsGenerated(protocol, "echoTensor", t);
        }
    }

    @Test
    void heterogeneousListsComeBackAsTheGeneratedStubGetsThemOverSoapAndGrpc() throws Exception {
        Mixed every = Values.mixedOfEveryKind();
        Mixed deepest = Values.nested(HeterogeneousList.MAX_DEPTH);
        for (String protocol : List.of("soap", "grpc")) {
            for (Mixed[] shape : new Mixed[][] {{every, Mixed.of(), Mixed.of(1L), every}, {Mixed.of()}, {null},
                {deepest}}) {
                EchoMixed m = new EchoMixed();
                m.setList(shape[0]);
                m.setMore(shape.length > 1 ? new ArrayList<>(List.of(shape).subList(1, shape.length)) : null);
                DynamicRecord back = sameAsGenerated(protocol, "echoMixed", m);
                assertEquals(shape[0] == null ? null : shape[0].getItems().size(),
                        back.get("list") == null ? null : ((DynamicList) back.get("list")).size());
            }
        }
    }

    @Test
    void aHeterogeneousListBuiltByHandTravelsAndTooDeepIsRefusedBeforeSending() throws Exception {
        DynamicStub stub = new DynamicStub(dynamic, channel(dynamic.descriptor(), both, new AdaptivePolicy()));
        DynamicRecord point = stub.newRecord("Point").set("x", 1.0).set("y", -0.0);
        DynamicList list = stub.newList("Mixed", 2.5, 7L, false, "a", new byte[] {1}, point,
                stub.newList("Mixed", stub.newList("Mixed")));
        for (String protocol : List.of("soap", "grpc")) {
            int before = served(protocol);
            DynamicRecord back = stub.withOptions(pinned(protocol)).callForRecord("echoMixed",
                    Map.of("list", list, "more", List.of(stub.newList("Mixed", "m"))));
            assertEquals(before + 1, served(protocol), "served over " + protocol);
            DynamicList echoed = (DynamicList) back.get("list");
            assertEquals(List.of(2.5, 7L, false, "a"), echoed.subList(0, 4));
            assertEquals(List.of("number", "integer", "flag", "text", "bytes", "point", "list"),
                    java.util.stream.IntStream.range(0, echoed.size()).mapToObj(echoed::alternative).toList());
            assertEquals(Double.doubleToRawLongBits(-0.0),
                    Double.doubleToRawLongBits((Double) ((DynamicRecord) echoed.get(5)).get("y")));
            assertEquals(List.of(List.of()), echoed.get(6));
            assertEquals(List.of(List.of("m")), back.get("more"));
        }
        assertEquals(List.of("soap", "grpc"), calls.stream().map(CallRecord::protocol).toList());

        DynamicList tooDeep = stub.newList("Mixed", "bottom");
        for (int i = 0; i < HeterogeneousList.MAX_DEPTH; i++) {
            tooDeep = stub.newList("Mixed", tooDeep);
        }
        Map<String, Object> arguments = Map.of("list", tooDeep);
        for (String protocol : List.of("soap", "grpc")) {
            int before = served(protocol);
            RuntimeException e = assertThrows(RuntimeException.class,
                    () -> stub.withOptions(pinned(protocol)).call("echoMixed", arguments));
            assertTrue(String.valueOf(e.getMessage()).contains("nests deeper than 64")
                    || String.valueOf(e.getCause()).contains("nests deeper than 64"), protocol + ": " + e);
            assertEquals(before, served(protocol), protocol + ": nothing reached the server");
        }
    }

    @Test
    void messageSizeCountsDynamicHeterogeneousListsAsGeneratedOnes() {
        MessageSize sizes = new MessageSize(ConformanceComponent.DESCRIPTOR.model());
        var request = ConformanceComponent.DESCRIPTOR.model().operation("echoMixed").request();
        EchoMixed bean = new EchoMixed();
        bean.setList(Values.mixedOfEveryKind());
        bean.setMore(new ArrayList<>(List.of(Mixed.of(), Values.nested(HeterogeneousList.MAX_DEPTH))));
        DynamicRecord record = asRecord(bean, "echoMixed");
        long generated = sizes.estimate(bean, request, Long.MAX_VALUE);
        assertTrue(generated > 600, "the record, tensor and bytes inside are counted: " + generated);
        assertEquals(generated, sizes.estimate(record, request, Long.MAX_VALUE));
        DynamicList self = dynamic.type("Mixed").newList(1.0);
        self.add(self);
        assertTrue(sizes.estimate(dynamic.request("echoMixed").set("list", self), request, Long.MAX_VALUE) < 100,
                "a list that holds itself is counted once");
    }

    @Test
    void callByNameAnswersLikeAGeneratedStub() throws Exception {
        DynamicStub stub = new DynamicStub(dynamic, channel(dynamic.descriptor(), both, new AdaptivePolicy()));
        for (String protocol : List.of("soap", "grpc")) {
            DynamicStub on = stub.withOptions(pinned(protocol));
            Values.assertSameDoubles(Values.EDGE_DOUBLES, (double[]) on.call("echoDoubles",
                    Map.of("values", Values.EDGE_DOUBLES.clone())));
            assertNull(on.call("ping", Map.of()));
            DynamicRecord qr = (DynamicRecord) on.call("divide", Map.of("dividend", 17L, "divisor", 5L));
            assertEquals(3L, qr.get("quotient"));
            assertEquals(2L, qr.get("remainder"));
            long before = impl.total.get();
            assertEquals(before + 4, on.call("increment", Map.of("by", 4)), "a required int argument, a long answer");
            // a record given as nested maps, a list of points with a null among them
            Map<String, Object> record = new HashMap<>();
            record.put("flag", true);
            record.put("small", (byte) -3);
            record.put("tags", java.util.Arrays.asList("a", null, ""));
            record.put("points", java.util.Arrays.asList(Map.of("x", 1.0, "y", -0.0), null));
            DynamicRecord back = (DynamicRecord) on.call("echoRecord", Map.of("record", record));
            assertEquals(java.util.Arrays.asList("a", null, ""), back.get("tags"));
            List<?> points = (List<?>) back.get("points");
            assertNull(points.get(1));
            assertEquals(Double.doubleToRawLongBits(-0.0),
                    Double.doubleToRawLongBits((Double) ((DynamicRecord) points.get(0)).get("y")));
            assertNull(back.get("ratio"), "nillable and not given: nil");
            // a cycle built by hand keeps its shape
            DynamicRecord a = stub.newRecord("LinkEntry").set("llong", 1L).set("sshort", (short) 1).set("iint", 1)
                    .set("ffloat", 1f).set("ddouble", 1.0);
            DynamicRecord b = stub.newRecord("LinkEntry").set("llong", 2L).set("sshort", (short) 2).set("iint", 2)
                    .set("ffloat", 2f).set("ddouble", Double.NaN).set("sstring", "\uD83D\uDE00");
            a.set("nextLink", b);
            b.set("nextLink", a);
            DynamicRecord head = (DynamicRecord) on.call("echoList", Map.of("head", a));
            DynamicRecord second = (DynamicRecord) head.get("nextLink");
            assertEquals("\uD83D\uDE00", second.get("sstring"));
            assertTrue(second.get("nextLink") == head, "the cycle closes on the same node");
        }
        assertEquals(List.of("soap", "soap", "soap", "soap", "soap", "soap", "grpc", "grpc", "grpc", "grpc", "grpc",
                "grpc"), calls.stream().map(CallRecord::protocol).toList());
    }

    @Test
    void declaredFaultsAndRemoteErrorsArriveAsSuch() {
        DynamicStub stub = new DynamicStub(dynamic, channel(dynamic.descriptor(), both, new AdaptivePolicy()));
        for (String protocol : List.of("soap", "grpc")) {
            DynamicFault f = assertThrows(DynamicFault.class, () -> stub.withOptions(pinned(protocol))
                    .call("divide", Map.of("dividend", 9L, "divisor", 0L)));
            assertEquals("divide", f.operation());
            assertEquals("division by zero", f.faultInfo().get("reason"));
            assertEquals(9L, f.faultInfo().get("dividend"));
            RemoteInvocationException e = assertThrows(RemoteInvocationException.class,
                    () -> stub.withOptions(pinned(protocol)).call("fail", Map.of("message", "boom " + protocol)));
            assertTrue(e.getMessage().contains("boom " + protocol), e.getMessage());
        }
        // the generated stub sees the same fault
        DivideFaultException g = assertThrows(DivideFaultException.class,
                () -> ConformanceComponent.stub(channel(ConformanceComponent.DESCRIPTOR, both, new AdaptivePolicy()))
                        .divide(9, 0));
        assertEquals("division by zero", g.getFaultInfo().getReason());
    }

    @Test
    void sizePolicyChoosesForDynamicCallsAsForGeneratedOnes() throws Exception {
        DynamicStub stub = new DynamicStub(dynamic, channel(dynamic.descriptor(), both, new SizePolicy()));
        stub.call("echoDoubles", Map.of("values", new double[10]));
        Values.assertSameDoubles(new double[200_000], (double[]) stub.call("echoDoubles",
                Map.of("values", new double[200_000])));
        EchoList small = new EchoList();
        small.setHead(Values.list(3));
        stub.call(asRecord(small, "echoList"));
        EchoList large = new EchoList();
        large.setHead(Values.list(50_000));
        DynamicRecord back = stub.call(asRecord(large, "echoList"));
        int n = 0;
        for (DynamicRecord e = (DynamicRecord) back.get("head"); e != null; e = (DynamicRecord) e.get("nextLink")) {
            n++;
        }
        assertEquals(50_000, n);
        assertEquals(List.of("soap", "grpc", "soap", "grpc"), calls.stream().map(CallRecord::protocol).toList());
        assertEquals(2, served("soap"));
        assertEquals(2, served("grpc"));
    }

    @Test
    void failsafeRepeatsADynamicCallOverSoap() throws Exception {
        int deadPort = UnusedPorts.port();
        Endpoint dead = new Endpoint("grpc", "grpc://127.0.0.1:" + deadPort + "/Conformance");
        DynamicStub stub = new DynamicStub(dynamic, channel(dynamic.descriptor(), List.of(dead, both.get(1)),
                new FixedPolicy("grpc")));
        assertEquals(7L, stub.call("increment", Map.of("by", 7)), "the request never left: repeated over SOAP");
        assertEquals(1, impl.increments.get(), "ran once");
        assertEquals(List.of("grpc", "soap"), calls.stream().map(CallRecord::protocol).toList());
        assertTrue(calls.get(1).fallback(), calls.get(1).reason());
        assertEquals(-1, calls.get(0).requestWireBytes(), "nothing was sent over the refused connection");
    }

    @Test
    void badInputIsRefusedByNameAndNothingIsSent() {
        DynamicStub stub = new DynamicStub(dynamic, channel(dynamic.descriptor(), both, new AdaptivePolicy()));
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
                () -> stub.call("echoDubbles", Map.of("values", new double[1])));
        assertTrue(e.getMessage().contains("no operation 'echoDubbles'") && e.getMessage().contains("echoDoubles"),
                e.getMessage());
        e = assertThrows(IllegalArgumentException.class, () -> stub.call("echoDoubles", Map.of("values", "1 2 3")));
        assertTrue(e.getMessage().contains("'values'") && e.getMessage().contains("double[]")
                && e.getMessage().contains("String"), e.getMessage());
        e = assertThrows(IllegalArgumentException.class, () -> stub.call("echoDoubles", Map.of("vals", new double[1])));
        assertTrue(e.getMessage().contains("no field 'vals'"), e.getMessage());
        e = assertThrows(IllegalArgumentException.class, () -> stub.call("divide", Map.of("dividend", 1L)));
        assertTrue(e.getMessage().contains("'divisor'"), e.getMessage());
        e = assertThrows(IllegalArgumentException.class, () -> stub.call("echoRecord",
                Map.of("record", Map.of("flag", "yes"))));
        assertTrue(e.getMessage().contains("'flag'") && e.getMessage().contains("Boolean"), e.getMessage());
        assertEquals(0, served("soap") + served("grpc"));
        assertTrue(calls.isEmpty());
    }

    /** What each transport reports it put on the wire for a known message: a double[1000] each way. */
    @Test
    void callRecordsCarryTheBytesOnTheWire() throws Exception {
        SimpleMeterRegistry meters = new SimpleMeterRegistry();
        MetaStub channel = channel(ConformanceComponent.DESCRIPTOR, both, new AdaptivePolicy(),
                new MicrometerCallListener(meters));
        EchoDoubles m = new EchoDoubles();
        m.setValues(new double[1000]);
        java.util.Arrays.setAll(m.getValues(), i -> Math.sqrt(i) * Math.PI);
        long encoded = ConformanceComponent.DESCRIPTOR.codec(ProtoCodec.class).toBytes("echoDoubles", m, 10).length;
        for (String protocol : List.of("grpc", "soap")) {
            channel.call(ConformanceComponent.DESCRIPTOR.operation("echoDoubles"), m, pinned(protocol));
        }
        CallRecord grpc = calls.get(0);
        CallRecord soap = calls.get(1);
        assertTrue(encoded >= 8000, "encoded " + encoded);
        // gRPC: the protobuf message plus a few bytes of gRPC's message frame
        assertTrue(grpc.requestWireBytes() > encoded && grpc.requestWireBytes() <= encoded + 32, grpc.toString());
        assertTrue(grpc.responseWireBytes() > encoded + 1 && grpc.responseWireBytes() <= encoded + 33, grpc.toString());
        // SOAP: the envelope with each double as text, well over 8 bytes apiece
        String text = generatedXml.toXml(m);
        assertTrue(soap.requestWireBytes() > text.length() && soap.requestWireBytes() < text.length() + 1000,
                soap + " for a body element of " + text.length() + " characters");
        assertTrue(soap.responseWireBytes() > text.length(), soap.toString());
        assertTrue(soap.requestWireBytes() > 1.5 * grpc.requestWireBytes());
        assertEquals(grpc.requestWireBytes(), meters.get(MicrometerCallListener.WIRE).tag("protocol", "grpc")
                .tag("direction", "sent").summary().totalAmount(), 0.0);
        assertEquals(soap.responseWireBytes(), meters.get(MicrometerCallListener.WIRE).tag("protocol", "soap")
                .tag("direction", "received").summary().totalAmount(), 0.0);
    }
}
