package io.switchboard.components.echo;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.switchboard.client.DynamicStub;
import io.switchboard.client.Switchboard;
import io.switchboard.codec.dynamic.DynamicFault;
import io.switchboard.codec.dynamic.DynamicInterface;
import io.switchboard.codec.dynamic.DynamicRecord;
import io.switchboard.idl.SchemaException;
import io.switchboard.idl.SchemaReader;
import io.switchboard.metastub.CallRecord;
import io.switchboard.metastub.MetaStub;
import io.switchboard.protocol.CallOptions;
import io.switchboard.protocol.Endpoint;
import io.switchboard.protocol.RemoteInvocationException;
import io.switchboard.registry.ComponentEntry;
import io.switchboard.registry.testing.RunningRegistry;
import io.switchboard.server.ComponentServer;
import io.switchboard.server.DynamicHandler;
import io.switchboard.server.DynamicSkeleton;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.IdentityHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Echo served from its schema alone: a {@link DynamicSkeleton} whose handler echoes, bound like a
 * generated skeleton, and called by the generated stub pinned to each protocol and by a
 * {@link DynamicStub}. Values come back exactly as from the generated component, the declared
 * fault as its typed exception, and a handler that misbehaves fails only its own call.
 */
class EchoDynamicSkeletonTest {
    private static final List<String> PROTOCOLS = List.of("soap", "grpc", "tcp", "local");
    private static final Path SCHEMA = Path.of("src/main/xsd/echo.xsd");
    /** NaNs with payloads: the binary protocols keep their bits, XML has one NaN. */
    private static final double[] NANS = {Double.longBitsToDouble(0x7ff8_0000_0000_1234L),
        Double.longBitsToDouble(0xfff8_0000_0000_0001L), Double.NaN};

    private static RunningRegistry registry;
    private static ComponentServer server;
    private static ComponentEntry entry;
    private static DynamicInterface iface;
    private static Switchboard client;
    private static final AtomicInteger handled = new AtomicInteger();
    private static final List<CallRecord> calls = new CopyOnWriteArrayList<>();

    @BeforeAll
    static void serve() {
        registry = RunningRegistry.start();
        iface = DynamicInterface.fromSchema(SCHEMA);
        server = ComponentServer.builder().registry(registry.url(), RunningRegistry.SECRET)
                .protocols(PROTOCOLS).drain(Duration.ZERO, ComponentServer.DEFAULT_DRAIN_TIMEOUT).build();
        entry = server.export(DynamicSkeleton.of(iface, EchoDynamicSkeletonTest::echo));
        client = registry.connect(b -> b.protocols(PROTOCOLS.toArray(String[]::new)).listener(calls::add));
    }

    /** Echo's operations; a few requests ask it to misbehave. */
    private static Object echo(String operation, DynamicRecord request) throws DynamicFault {
        handled.incrementAndGet();
        switch (operation) {
            case "echoDoubles": {
                double[] values = (double[]) request.get("values");
                if (values != null && values.length == 1 && values[0] == 13) {
                    return "thirteen";   // a String where the response holds double[]
                }
                if (values != null && values.length == 1 && values[0] == 14) {
                    throw new IllegalStateException("fourteen is not echoed");
                }
                return values;
            }
            case "echoList": {
                DynamicRecord head = (DynamicRecord) request.get("head");
                if (head != null && (Long) head.get("llong") == -1) {
                    // echoList declares no fault
                    throw new DynamicFault("divide", iface.message("divideFault").newRecord(
                            Map.of("reason", "not this one", "dividend", 1L)));
                }
                return head;
            }
            case "divide": {
                long dividend = (Long) request.get("dividend");
                long divisor = (Long) request.get("divisor");
                if (divisor == 0) {
                    throw new DynamicFault(operation, iface.message("divideFault").newRecord(
                            Map.of("reason", "division by zero", "dividend", dividend)));
                }
                return Map.of("quotient", dividend / divisor, "remainder", dividend % divisor);
            }
            case "echoTensor":
                return request.get("tensor");
            case "echoMixed":
                return request.get("list");
            default:
                return null;
        }
    }

    @AfterAll
    static void stop() {
        server.close();
        registry.close();
    }

    @BeforeEach
    void forget() {
        calls.clear();
    }

    private static EchoStub generated(String protocol) {
        return client.lookup(EchoComponent.DESCRIPTOR, EchoComponent::stub)
                .withOptions(CallOptions.DEFAULT.with(MetaStub.PROTOCOL, protocol));
    }

    @Test
    void theGeneratedStubGetsEveryValueBackExactlyOnEveryProtocol() {
        double[] edge = {0.0, -0.0, 1.0, Double.POSITIVE_INFINITY, Double.NEGATIVE_INFINITY, Double.MIN_VALUE,
            Double.MAX_VALUE, 1e-310, 0.1, NANS[0], NANS[1], NANS[2]};
        for (String protocol : PROTOCOLS) {
            EchoStub echo = generated(protocol);
            double[] back = echo.echoDoubles(edge.clone());
            assertEquals(edge.length, back.length, protocol);
            for (int i = 0; i < edge.length; i++) {
                if (Double.isNaN(edge[i]) && protocol.equals("soap")) {
                    assertTrue(Double.isNaN(back[i]), protocol + " index " + i);
                } else {
                    assertEquals(Double.doubleToRawLongBits(edge[i]), Double.doubleToRawLongBits(back[i]),
                            protocol + " index " + i);
                }
            }
            double[] empty = echo.echoDoubles(new double[0]);
            assertNotNull(empty, protocol + ": an empty array is not null");
            assertEquals(0, empty.length);
            assertNull(echo.echoDoubles(null), protocol + ": a null array is not empty");
            assertNull(echo.echoList(null), protocol);
            echo.empty();

            LinkEntry head = list(1000);
            assertSameList(head, echo.echoList(head), 1000, protocol);
            LinkEntry ring = list(3);
            ring.getNextLink().getNextLink().setNextLink(ring);
            LinkEntry ringBack = echo.echoList(ring);
            assertSame(ringBack, ringBack.getNextLink().getNextLink().getNextLink(), protocol + ": the tail points at the head");
            assertSameList(ring, ringBack, 3, protocol);

            assertEquals(List.of(protocol), calls.stream().map(CallRecord::protocol).distinct().toList(),
                    "every call went where it was pinned");
            calls.clear();
        }
    }

    @Test
    void theDeclaredFaultReachesTheGeneratedStubAsItsException() {
        for (String protocol : PROTOCOLS) {
            EchoStub echo = generated(protocol);
            DivideFaultException e = assertThrows(DivideFaultException.class, () -> echo.divide(7, 0), protocol);
            assertEquals("division by zero", e.getFaultInfo().getReason());
            assertEquals(7, e.getFaultInfo().getDividend());
            DivideResponse ok = assertDoesNotThrowFault(() -> echo.divide(7, 2));
            assertEquals(3, ok.getQuotient(), protocol);
            assertEquals(1, ok.getRemainder(), protocol);
        }
    }

    @Test
    void aDynamicStubCallsItToo() throws Exception {
        DynamicStub echo = client.dynamic("Echo");
        for (String protocol : PROTOCOLS) {
            DynamicStub on = echo.withOptions(CallOptions.DEFAULT.with(MetaStub.PROTOCOL, protocol));
            double[] back = (double[]) on.call("echoDoubles", Map.of("values", new double[] {-0.0, NANS[0]}));
            assertEquals(Double.doubleToRawLongBits(-0.0), Double.doubleToRawLongBits(back[0]), protocol);
            assertTrue(Double.isNaN(back[1]), protocol);
            DynamicRecord node = echo.newRecord("LinkEntry").set("llong", 5L).set("sshort", (short) 1).set("iint", 2)
                    .set("ffloat", -0f).set("ddouble", Double.NEGATIVE_INFINITY);
            node.set("nextLink", node);
            DynamicRecord nodeBack = (DynamicRecord) on.call("echoList", Map.of("head", node));
            assertSame(nodeBack, nodeBack.get("nextLink"), protocol + ": a node pointing at itself");
            assertEquals(Float.floatToRawIntBits(-0f), Float.floatToRawIntBits((Float) nodeBack.get("ffloat")), protocol);
            DynamicFault fault = assertThrows(DynamicFault.class, () -> on.call("divide", Map.of("dividend", 9L, "divisor", 0L)));
            assertEquals(9L, fault.faultInfo().get("dividend"));
            assertEquals(4L, ((DynamicRecord) on.call("divide", Map.of("dividend", 9L, "divisor", 2L))).get("quotient"));
            assertNull(on.call("empty", Map.of()));
        }
    }

    @Test
    void aMisbehavingHandlerFailsOnlyItsOwnCall() {
        for (String protocol : PROTOCOLS) {
            EchoStub echo = generated(protocol);
            int before = handled.get();
            RuntimeException wrongType = assertThrows(RuntimeException.class, () -> echo.echoDoubles(new double[] {13}),
                    protocol);
            assertTrue(wrongType instanceof RemoteInvocationException, protocol + ": " + wrongType);
            assertTrue(wrongType.getMessage().contains("Echo.echoDoubles"), protocol + ": " + wrongType.getMessage());
            assertTrue(wrongType.getMessage().contains("String"), protocol + ": " + wrongType.getMessage());
            assertEquals(before + 1, handled.get(), protocol + ": the failed call ran once, and was not repeated");
            assertArrayEquals(new double[] {2}, echo.echoDoubles(new double[] {2}), protocol + ": the next call works");

            RemoteInvocationException thrown = assertThrows(RemoteInvocationException.class,
                    () -> echo.echoDoubles(new double[] {14}), protocol);
            assertTrue(thrown.getMessage().contains("fourteen is not echoed"), protocol + ": " + thrown.getMessage());

            LinkEntry faulty = list(1);
            faulty.setLlong(-1);
            RemoteInvocationException undeclared = assertThrows(RemoteInvocationException.class,
                    () -> echo.echoList(faulty), protocol);
            assertTrue(undeclared.getMessage().contains("Echo.echoList declares no fault"), protocol + ": "
                    + undeclared.getMessage());
            assertSameList(list(2), echo.echoList(list(2)), 2, protocol + ": serving goes on");
        }
    }

    @Test
    void itsEntryCarriesWhatAGeneratedComponentsEntryCarries() throws Exception {
        try (ComponentServer compiled = ComponentServer.builder().protocols(PROTOCOLS).build()) {
            ComponentEntry expected = compiled.export(EchoComponent.skeleton(new EchoService()));
            assertEquals(expected.name(), entry.name());
            assertEquals(expected.endpoints().stream().map(Endpoint::protocol).toList(),
                    entry.endpoints().stream().map(Endpoint::protocol).toList());
            assertEquals(expected.features(), entry.features());
            assertEquals(expected.leaseSeconds(), entry.leaseSeconds());
            assertEquals(expected.interfaceSchema(), entry.interfaceSchema());
            assertNotNull(entry.interfaceProto());
            assertEquals(withoutFirstLine(expected.interfaceProto()), withoutFirstLine(entry.interfaceProto()),
                    "the same .proto but for the line that says what made it");
            assertEquals(comparable(fetch(expected.wsdlUrl())), comparable(fetch(entry.wsdlUrl())),
                    "the same WSDL but for its address and what made it");
            assertEquals(registry.connect().registry().lookup("Echo").get(0).interfaceProto(), entry.interfaceProto(),
                    "what the registry holds");
        }
    }

    @Test
    void aSchemaWithADtdOrOverTheLimitIsRefusedWhenTheInterfaceIsMade(@TempDir Path tmp) throws Exception {
        String schema = Files.readString(SCHEMA);
        String withDtd = schema.replaceFirst("<xs:schema", "<!DOCTYPE xs:schema [<!ENTITY e SYSTEM \"file:///etc/passwd\">]>\n<xs:schema");
        SchemaException dtd = assertThrows(SchemaException.class, () -> DynamicInterface.fromSchema(withDtd));
        assertTrue(dtd.getMessage().toLowerCase().contains("doctype") || dtd.getMessage().contains("DTD"), dtd.getMessage());
        String padded = schema.replaceFirst("<xs:schema", "<!--" + " ".repeat(SchemaReader.MAX_SCHEMA_BYTES) + "-->\n<xs:schema");
        SchemaException large = assertThrows(SchemaException.class, () -> DynamicInterface.fromSchema(padded));
        assertTrue(large.getMessage().contains("limit"), large.getMessage());
        Path file = Files.writeString(tmp.resolve("big.xsd"), padded);
        assertThrows(SchemaException.class, () -> DynamicInterface.fromSchema(file));
    }

    private interface FaultingCall<T> {
        T call() throws DivideFaultException;
    }

    private static <T> T assertDoesNotThrowFault(FaultingCall<T> call) {
        try {
            return call.call();
        } catch (DivideFaultException e) {
            throw new AssertionError("unexpected declared fault", e);
        }
    }

    private static LinkEntry list(int n) {
        LinkEntry head = null;
        for (int i = n - 1; i >= 0; i--) {
            LinkEntry e = new LinkEntry();
            e.setLlong(i * 1_000_000_007L);
            e.setSshort((short) i);
            e.setIint(-i);
            e.setFfloat(i == 0 ? -0f : i / 3f);
            e.setDdouble(i == 1 ? Double.NaN : i == 2 ? Double.NEGATIVE_INFINITY : Math.sqrt(i));
            e.setSstring(i % 2 == 0 ? null : "\uD835\uDD4A" + i);
            e.setNextLink(head);
            head = e;
        }
        return head;
    }

    /** The same fields node by node, floats and doubles by their bits, and the same shape (where nodes repeat). */
    private static void assertSameList(LinkEntry expected, LinkEntry actual, int nodes, String where) {
        IdentityHashMap<LinkEntry, Integer> seenExpected = new IdentityHashMap<>();
        IdentityHashMap<LinkEntry, Integer> seenActual = new IdentityHashMap<>();
        for (int i = 0; expected != null && !seenExpected.containsKey(expected); i++) {
            assertNotNull(actual, where + ": node " + i + " is missing");
            seenExpected.put(expected, i);
            seenActual.put(actual, i);
            assertEquals(expected.getLlong(), actual.getLlong(), where + " llong at " + i);
            assertEquals(expected.getSshort(), actual.getSshort(), where + " sshort at " + i);
            assertEquals(expected.getIint(), actual.getIint(), where + " iint at " + i);
            assertEquals(Float.floatToRawIntBits(expected.getFfloat()), Float.floatToRawIntBits(actual.getFfloat()),
                    where + " ffloat at " + i);
            assertEquals(Double.doubleToRawLongBits(expected.getDdouble()), Double.doubleToRawLongBits(actual.getDdouble()),
                    where + " ddouble at " + i);
            assertEquals(expected.getSstring(), actual.getSstring(), where + " sstring at " + i);
            expected = expected.getNextLink();
            actual = actual.getNextLink();
        }
        assertEquals(nodes, seenExpected.size(), where);
        assertEquals(expected == null ? null : seenExpected.get(expected), actual == null ? null : seenActual.get(actual),
                where + ": the list ends, or points back, at the same node");
    }

    private static String withoutFirstLine(String text) {
        return text.substring(text.indexOf('\n') + 1);
    }

    private static String comparable(String wsdl) {
        return wsdl.replaceAll("<wsdl:documentation>[^<]*</wsdl:documentation>", "")
                .replaceAll("location=\"[^\"]*\"", "location=\"\"");
    }

    private static String fetch(String url) throws Exception {
        HttpResponse<String> response = HttpClient.newHttpClient().send(HttpRequest.newBuilder(URI.create(url)).build(),
                HttpResponse.BodyHandlers.ofString());
        assertEquals(200, response.statusCode(), url);
        return response.body();
    }
}
