package io.switchboard.metastub;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.switchboard.protocol.CallOptions;
import io.switchboard.protocol.ClientSettings;
import io.switchboard.protocol.Endpoint;
import io.switchboard.protocol.ServerSettings;
import io.switchboard.protocol.Skeleton;
import io.switchboard.protocol.spi.ProtocolServer;
import io.switchboard.protocol.spi.Protocols;
import io.switchboard.testing.CountingSkeleton;
import io.switchboard.testing.FaultProxy;
import io.switchboard.testing.TestCertificates;
import io.switchboard.testing.conformance.ConformanceComponent;
import io.switchboard.testing.conformance.ConformanceImpl;
import io.switchboard.testing.conformance.ConformanceStub;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * The meta-stub against servers that require client certificates: a trusted client calls over
 * both protocols, its fallback from gRPC to SOAP stays on {@code https://} (the SOAP server
 * refuses plain text, so a run there was a TLS call), and an entry that lists a plain-text gRPC
 * endpoint beside an {@code https://} one is never called in plain text.
 */
class TlsFallbackTest {
    private final TestCertificates certs = TestCertificates.get();
    private final ConformanceImpl impl = new ConformanceImpl();
    private final Map<String, AtomicInteger> served = new ConcurrentHashMap<>();
    private final List<CallRecord> calls = new CopyOnWriteArrayList<>();
    private final List<AutoCloseable> closing = new ArrayList<>();
    private final Map<String, ProtocolServer> servers = new ConcurrentHashMap<>();

    @AfterEach
    void stop() throws Exception {
        for (AutoCloseable c : closing) {
            c.close();
        }
    }

    private Endpoint export(String protocol, ServerSettings settings) {
        ProtocolServer s = Protocols.get(protocol).newServer(settings);
        closing.add(s);
        servers.put(protocol, s);
        Skeleton counting = new CountingSkeleton(ConformanceComponent.skeleton(impl), protocol, served, label -> { });
        return s.export(counting);
    }

    private ConformanceStub client(List<Endpoint> endpoints) {
        MetaStub channel = MetaStub.builder(ConformanceComponent.DESCRIPTOR).protocols(List.of("grpc", "soap"))
                .endpoints(endpoints).policy(new FixedPolicy("grpc")).listener(calls::add)
                .settings(ClientSettings.defaults().withTls(certs.client())).build();
        closing.add(channel::close);
        return ConformanceComponent.stub(channel);
    }

    private int served(String protocol) {
        AtomicInteger n = served.get(protocol);
        return n == null ? 0 : n.get();
    }

    @Test
    void aTrustedClientCallsOverBothProtocolsAndFallsBackOverHttps() {
        ServerSettings mutual = ServerSettings.defaults().withTls(certs.serverMutual());
        Endpoint grpc = export("grpc", mutual);
        Endpoint soap = export("soap", mutual);
        assertTrue(grpc.address().startsWith("grpcs://"), grpc.address());
        assertTrue(soap.address().startsWith("https://"), soap.address());
        FaultProxy proxy = FaultProxy.to(grpc);
        closing.add(proxy);
        ConformanceStub stub = client(List.of(proxy.route(grpc), soap));

        stub.ping();
        stub.withOptions(CallOptions.DEFAULT.with(MetaStub.PROTOCOL, "soap")).ping();
        assertEquals(1, served("grpc"));
        assertEquals(1, served("soap"));

        proxy.refuse();   // gRPC unreachable from now on: the next call falls back (echoDoubles is idempotent)
        proxy.resetAll();
        double[] values = {1.5, -0.0};
        assertEquals(2, stub.echoDoubles(values).length);
        assertEquals(List.of("grpc", "soap", "grpc", "soap"), calls.stream().map(CallRecord::protocol).toList());
        CallRecord fallback = calls.get(3);
        assertTrue(fallback.fallback(), fallback.reason());
        assertTrue(fallback.address().startsWith("https://"), "the fallback stayed on TLS: " + fallback.address());
        assertEquals(2, served("soap"), "the fallback ran once, on the https server that refuses plain text");
        assertEquals(1, served("grpc"));
        assertEquals(0, servers.get("soap").refusedConnections(), "no call was tried in plain text");
    }

    @Test
    void aPlainTextGrpcEndpointBesideAnHttpsOneIsNeverACandidate() {
        Endpoint grpc = export("grpc", ServerSettings.defaults());
        Endpoint soap = export("soap", ServerSettings.defaults().withTls(certs.serverMutual()));
        ConformanceStub stub = client(List.of(grpc, soap));
        assertEquals(List.of("soap"), ProtocolSuite.of(List.of("grpc", "soap"), List.of(grpc, soap)).candidates());
        stub.withOptions(CallOptions.DEFAULT.with(MetaStub.POLICY, new FirstCommonPolicy())).ping();
        assertEquals(0, served("grpc"), "never called in plain text");
        assertEquals(1, served("soap"));
        assertEquals(List.of("soap"), calls.stream().map(CallRecord::protocol).toList());
    }
}
