package io.switchboard.metastub;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.switchboard.protocol.CallOptions;
import io.switchboard.protocol.Endpoint;
import io.switchboard.protocol.spi.ProtocolServer;
import io.switchboard.protocol.spi.Protocols;
import io.switchboard.protocol.ServerSettings;
import io.switchboard.testing.conformance.ConformanceComponent;
import io.switchboard.testing.conformance.ConformanceImpl;
import io.switchboard.testing.conformance.ConformanceStub;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * The protocol a meta-stub chooses for each call, seen through its call records, with a real SOAP
 * server beside an in-process test protocol.
 */
class MetaStubSelectionTest {
    private static ProtocolServer soap;
    private static ProtocolServer inproc;
    private static List<Endpoint> both;

    @BeforeAll
    static void start() {
        ConformanceImpl impl = new ConformanceImpl();
        soap = Protocols.get("soap").newServer(ServerSettings.defaults());
        inproc = Protocols.get("inproc").newServer(ServerSettings.defaults());
        both = List.of(inproc.export(ConformanceComponent.skeleton(impl)), soap.export(ConformanceComponent.skeleton(impl)));
    }

    @AfterAll
    static void stop() {
        soap.close();
        inproc.close();
    }

    private record Client(MetaStub channel, ConformanceStub stub, List<CallRecord> calls) {
        List<String> protocols() {
            return calls.stream().map(CallRecord::protocol).toList();
        }
    }

    private static Client client(List<String> clientProtocols, List<Endpoint> server, SelectionPolicy policy) {
        List<CallRecord> calls = new CopyOnWriteArrayList<>();
        MetaStub channel = MetaStub.builder(ConformanceComponent.DESCRIPTOR).protocols(clientProtocols).endpoints(server)
                .policy(policy).listener(calls::add).build();
        return new Client(channel, ConformanceComponent.stub(channel), calls);
    }

    @Test
    void firstCommonTakesTheClientsFirstChoiceTheServerHas() {
        Client c = client(List.of("inproc", "soap"), both, new FirstCommonPolicy());
        c.stub().ping();
        Client reversed = client(List.of("soap", "inproc"), both, new FirstCommonPolicy());
        reversed.stub().ping();
        assertEquals(List.of("inproc"), c.protocols());
        assertEquals(List.of("soap"), reversed.protocols());
        assertEquals("first-common (stub policy)", c.calls().get(0).reason());
    }

    @Test
    void aProtocolMissingOnEitherSideIsNeverUsed() {
        Client clientWithout = client(List.of("soap"), both, new SizePolicy());
        Client serverWithout = client(List.of("inproc", "soap"), List.of(both.get(1)), new SizePolicy());
        for (int i = 0; i < 5; i++) {
            clientWithout.stub().echoDoubles(new double[100_000]);
            serverWithout.stub().echoDoubles(new double[100_000]);
        }
        assertEquals(List.of("soap"), clientWithout.channel().suite().candidates());
        assertEquals(List.of("soap"), serverWithout.channel().suite().candidates());
        assertTrue(clientWithout.protocols().stream().allMatch("soap"::equals));
        assertTrue(serverWithout.protocols().stream().allMatch("soap"::equals));
        NoCommonProtocolException e = assertThrows(NoCommonProtocolException.class,
                () -> serverWithout.stub().withOptions(CallOptions.DEFAULT.with(MetaStub.PROTOCOL, "inproc")).ping());
        assertTrue(e.getMessage().contains("inproc"));
    }

    @Test
    void eachOverrideLevelWinsOverTheOneBelow() {
        Client c = client(List.of("inproc", "soap"), both, new FixedPolicy("inproc"));
        c.stub().ping();                                                    // stub policy: inproc
        c.channel().setOperationPolicy("ping", new FixedPolicy("soap"));
        c.stub().ping();                                                    // operation policy: soap
        c.stub().echoDoubles(new double[] {1});                             // other operation: stub policy
        ConformanceStub callPolicy = c.stub().withOptions(CallOptions.DEFAULT.with(MetaStub.POLICY, new FixedPolicy("inproc")));
        callPolicy.ping();                                                  // call policy over operation policy
        ConformanceStub pinned = c.stub().withOptions(CallOptions.DEFAULT.with(MetaStub.POLICY, new FixedPolicy("inproc"))
                .with(MetaStub.PROTOCOL, "soap"));
        pinned.ping();                                                      // pinned protocol over call policy
        assertEquals(List.of("inproc", "soap", "inproc", "inproc", "soap"), c.protocols());
        List<String> reasons = new ArrayList<>();
        c.calls().forEach(r -> reasons.add(r.reason()));
        assertEquals(List.of("fixed:inproc (stub policy)", "fixed:soap (operation policy)", "fixed:inproc (stub policy)",
                "fixed:inproc (call policy)", "pinned on call"), reasons);
    }

    /**
     * Calls of two policies set on calls, alternating on one stub, say why with the same strings
     * each time: a policy's reasons are made once, not again whenever the policy changes from the
     * call before (three strings per call when two policies took turns).
     */
    @Test
    void policiesTakingTurnsOnOneStubReuseTheirReasons() {
        Client c = client(List.of("inproc", "soap"), both, new FirstCommonPolicy());
        ConformanceStub viaInproc = c.stub().withOptions(CallOptions.DEFAULT.with(MetaStub.POLICY, new FixedPolicy("inproc")));
        ConformanceStub viaSoap = c.stub().withOptions(CallOptions.DEFAULT.with(MetaStub.POLICY, new FixedPolicy("soap")));
        for (int i = 0; i < 3; i++) {
            viaInproc.ping();
            viaSoap.ping();
        }
        List<CallRecord> calls = c.calls();
        assertEquals(6, calls.size());
        for (int i = 2; i < calls.size(); i++) {
            assertSame(calls.get(i - 2).reason(), calls.get(i).reason(), "call " + i + ": " + calls.get(i).reason());
        }
        assertEquals(List.of("fixed:inproc (call policy)", "fixed:soap (call policy)"),
                List.of(calls.get(0).reason(), calls.get(1).reason()));
    }

    @Test
    void concurrentCallsWithDifferentPinsDoNotLeakIntoEachOther() throws Exception {
        Client c = client(List.of("inproc", "soap"), both, new FirstCommonPolicy());
        ConformanceStub viaSoap = c.stub().withOptions(CallOptions.DEFAULT.with(MetaStub.PROTOCOL, "soap"));
        ConformanceStub viaInproc = c.stub().withOptions(CallOptions.DEFAULT.with(MetaStub.PROTOCOL, "inproc"));
        List<Thread> threads = new ArrayList<>();
        for (int t = 0; t < 8; t++) {
            ConformanceStub s = t % 2 == 0 ? viaSoap : viaInproc;
            double tag = t % 2;
            threads.add(new Thread(() -> {
                for (int i = 0; i < 25; i++) {
                    s.echoDoubles(new double[] {tag});
                }
            }));
        }
        threads.forEach(Thread::start);
        for (Thread t : threads) {
            t.join();
        }
        assertEquals(200, c.calls().size());
        assertEquals(100, c.protocols().stream().filter("soap"::equals).count());
        assertEquals(100, c.protocols().stream().filter("inproc"::equals).count());
    }

    @Test
    void policiesAreFoundByName() {
        assertEquals("first-common", Policies.byName("first-common").name());
        assertEquals("adaptive", Policies.byName("adaptive").name());
        assertEquals("size", Policies.byName("size").name());
        assertEquals("size:4096", Policies.byName("size:4096").name());
        assertThrows(IllegalArgumentException.class, () -> Policies.byName("size:big"));
        assertEquals("fixed:grpc", Policies.byName("fixed:grpc").name());
        assertThrows(IllegalArgumentException.class, () -> Policies.byName("fastest"));
    }

    @Test
    void aSuiteWithoutSoapIsRefused() {
        assertThrows(IllegalArgumentException.class, () -> ProtocolSuite.of(List.of("inproc"), both));
    }
}
