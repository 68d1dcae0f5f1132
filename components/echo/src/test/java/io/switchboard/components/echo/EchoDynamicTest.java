package io.switchboard.components.echo;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.switchboard.codec.dynamic.DynamicFault;
import io.switchboard.codec.dynamic.DynamicList;
import io.switchboard.codec.dynamic.DynamicRecord;
import io.switchboard.metastub.CallRecord;
import io.switchboard.metastub.MetaStub;
import io.switchboard.protocol.CallOptions;
import io.switchboard.client.DynamicStub;
import io.switchboard.registry.testing.RunningRegistry;
import io.switchboard.client.Switchboard;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CopyOnWriteArrayList;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * The echo component called by a client that knows only the registry's address and the name
 * "Echo": no generated code on its side, the interface schema from the registry entry. Answers
 * are those of the generated stub, over SOAP and gRPC, and every call is on the meta-stub's
 * records with the bytes it put on the wire.
 */
class EchoDynamicTest {
    private static RunningRegistry registry;
    private static Switchboard client;
    private static EchoService impl;
    private static final List<CallRecord> calls = new CopyOnWriteArrayList<>();

    @BeforeAll
    static void start() {
        registry = RunningRegistry.start();
        impl = new EchoService();
        registry.serve(EchoComponent.skeleton(impl));
        // over the network: in this JVM the meta-stub would otherwise prefer the in-process protocol
        // (InProcessEndToEndTest covers that)
        client = registry.connect(b -> b.protocols("grpc", "soap").listener(calls::add));
    }

    @AfterAll
    static void stop() {
        registry.close();
    }

    @Test
    void echoByNameOverSoapAndGrpcAnswersAsTheGeneratedStub() throws Exception {
        DynamicStub echo = client.dynamic("Echo");
        Echo generated = client.lookup(EchoComponent.DESCRIPTOR, EchoComponent::stub);
        assertEquals(List.of("echoDoubles", "echoList", "empty", "echoTensor", "echoMixed", "divide"), echo.operations());
        double[] edge = {Double.NaN, -0.0, 0.0, Double.POSITIVE_INFINITY, Double.NEGATIVE_INFINITY, Double.MIN_VALUE,
            Double.MAX_VALUE, 1e-310, 0.1};
        for (String protocol : List.of("soap", "grpc")) {
            calls.clear();
            DynamicStub on = echo.withOptions(CallOptions.DEFAULT.with(MetaStub.PROTOCOL, protocol));
            long before = impl.calls();
            double[] back = (double[]) on.call("echoDoubles", Map.of("values", edge.clone()));
            double[] expected = generated.echoDoubles(edge.clone());
            assertEquals(expected.length, back.length);
            for (int i = 0; i < edge.length; i++) {
                assertEquals(Double.doubleToRawLongBits(expected[i]), Double.doubleToRawLongBits(back[i]), "index " + i);
            }
            assertEquals(0, ((double[]) on.call("echoDoubles", Map.of("values", new double[0]))).length);
            assertNull(on.call("echoDoubles", Map.of()));
            assertNull(on.call("empty", Map.of()));
            assertEquals(before + 5, impl.calls(), "each call ran once on the component");
            assertEquals(protocol, calls.get(0).protocol());
            assertEquals("echoDoubles", calls.get(0).operation());
            assertTrue(calls.get(0).requestWireBytes() > 0 && calls.get(0).responseWireBytes() > 0, calls.get(0).toString());

            // a 10,000-node list whose last node points back to the first
            DynamicRecord head = null;
            DynamicRecord last = null;
            for (int i = 9_999; i >= 0; i--) {
                DynamicRecord e = echo.newRecord("LinkEntry").set("llong", (long) i).set("sshort", (short) i)
                        .set("iint", -i).set("ffloat", i / 3f).set("ddouble", i == 1 ? -0.0 : Math.sqrt(i))
                        .set("sstring", i % 2 == 0 ? null : "\uD835\uDD4A" + i).set("nextLink", head);
                last = last == null ? e : last;
                head = e;
            }
            last.set("nextLink", head);
            DynamicRecord a = head;
            DynamicRecord b = (DynamicRecord) on.call("echoList", Map.of("head", head));
            DynamicRecord firstBack = b;
            for (int i = 0; i < 10_000; i++, a = (DynamicRecord) a.get("nextLink"), b = (DynamicRecord) b.get("nextLink")) {
                assertEquals(a.toMap().keySet(), b.toMap().keySet());
                for (String f : List.of("llong", "sshort", "iint", "ffloat", "sstring")) {
                    assertEquals(a.get(f), b.get(f), f + " at " + i);
                }
                assertEquals(Double.doubleToRawLongBits((Double) a.get("ddouble")),
                        Double.doubleToRawLongBits((Double) b.get("ddouble")), "ddouble at " + i);
            }
            assertSame(firstBack, b, "after 10,000 nodes the list is back at its head");

            // an n-d array, a nested heterogeneous list and the declared fault
            DynamicRecord tensor = echo.newRecord("Tensor").set("shape", new int[] {2, 1}).set("values", new double[] {-0.0, 1});
            DynamicRecord tensorBack = (DynamicRecord) on.call("echoTensor", Map.of("tensor", tensor));
            assertArrayEquals(new int[] {2, 1}, (int[]) tensorBack.get("shape"));
            DynamicList mixed = echo.newList("Mixed", 1.5, 7L, true, "x", tensor, echo.newList("Mixed", echo.newList("Mixed")));
            DynamicList mixedBack = (DynamicList) on.call("echoMixed", Map.of("list", mixed));
            assertEquals(List.of("number", "integer", "flag", "text", "tensor", "list"),
                    java.util.stream.IntStream.range(0, mixedBack.size()).mapToObj(mixedBack::alternative).toList());
            assertEquals(List.of(List.of()), mixedBack.get(5));
            DynamicFault fault = assertThrows(DynamicFault.class,
                    () -> on.call("divide", Map.of("dividend", 7L, "divisor", 0L)));
            assertEquals(7L, fault.faultInfo().get("dividend"));
            assertEquals(3L, ((DynamicRecord) on.call("divide", Map.of("dividend", 7L, "divisor", 2L))).get("quotient"));
        }
    }

    @Test
    void anUnknownNameIsNotBound() {
        assertThrows(Switchboard.NotBoundException.class, () -> client.dynamic("Ekho"));
    }

    @Test
    void adaptiveChoosesPerCallForDynamicCallsToo() throws Exception {
        DynamicStub echo = client.dynamic("Echo");
        calls.clear();
        echo.call("echoDoubles", Map.of("values", new double[1_000_000]));
        assertEquals("grpc", calls.get(calls.size() - 1).protocol(), "a megabyte array goes over the bulk protocol");
        assertTrue(calls.get(calls.size() - 1).requestWireBytes() >= 8_000_000);
    }
}
