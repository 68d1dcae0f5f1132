package io.switchboard.server;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.switchboard.metastub.CallRecord;
import io.switchboard.metastub.FixedPolicy;
import io.switchboard.metastub.MetaStub;
import io.switchboard.protocol.CallOptions;
import io.switchboard.protocol.Endpoint;
import io.switchboard.protocol.RefusedException;
import io.switchboard.registry.ComponentEntry;
import io.switchboard.testing.FaultProxy;
import io.switchboard.testing.conformance.ConformanceComponent;
import io.switchboard.testing.conformance.ConformanceImpl;
import io.switchboard.testing.conformance.ConformanceStub;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import org.junit.jupiter.api.Test;

/**
 * A component server with tcp on its class path serves a tcp endpoint beside SOAP and gRPC and
 * lists it in the entry; a client reaches it when a call pins it or under {@code fixed:tcp}, and
 * falls back to SOAP when it is down, running a non-idempotent operation once.
 */
class TcpComponentServerTest {
    private final List<CallRecord> calls = new CopyOnWriteArrayList<>();

    private List<String> protocols() {
        return calls.stream().map(CallRecord::protocol).toList();
    }

    private MetaStub client(List<Endpoint> endpoints, boolean fixedTcp) {
        MetaStub.Builder b = MetaStub.builder(ConformanceComponent.DESCRIPTOR).endpoints(endpoints).listener(calls::add)
                .serverRecognisesCallIds(true).preferInProcess(false);   // the server is in this JVM: not in process here
        return (fixedTcp ? b.policy(new FixedPolicy("tcp")) : b).build();
    }

    @Test
    void theEntryListsATcpEndpointAndPinnedOrFixedCallsUseIt() {
        ConformanceImpl impl = new ConformanceImpl();
        try (ComponentServer server = ComponentServer.builder().build()) {
            assertTrue(server.protocols().contains("tcp"), server.protocols().toString());
            ComponentEntry entry = server.export("Counter", ConformanceComponent.skeleton(impl));
            Endpoint tcp = entry.endpoint("tcp").orElseThrow();
            assertTrue(tcp.address().startsWith("tcp://"), tcp.address());
            assertTrue(entry.interfaceProto() != null && entry.interfaceProto().contains("service Conformance"), "the .proto a brpc client builds from");
            try (MetaStub adaptive = client(entry.endpoints(), false); MetaStub fixed = client(entry.endpoints(), true)) {
                ConformanceStub byDefault = ConformanceComponent.stub(adaptive);
                for (int i = 0; i < 40; i++) {
                    byDefault.ping();
                }
                assertTrue(!protocols().contains("tcp"), "a policy of its own never picks tcp: " + protocols());
                calls.clear();
                byDefault.withOptions(CallOptions.DEFAULT.with(MetaStub.PROTOCOL, "tcp")).increment(1);
                ConformanceComponent.stub(fixed).increment(1);
                assertEquals(List.of("tcp", "tcp"), protocols());
                assertEquals(2, impl.increments.get());
            }
        }
    }

    @Test
    void aPinnedCallOverTheFrameLimitIsRefusedBeforeAnythingIsSent() {
        ConformanceImpl impl = new ConformanceImpl();
        try (ComponentServer server = ComponentServer.builder().build()) {
            ComponentEntry entry = server.export("Counter", ConformanceComponent.skeleton(impl));
            try (MetaStub channel = client(entry.endpoints(), false)) {
                ConformanceStub pinned = ConformanceComponent.stub(channel)
                        .withOptions(CallOptions.DEFAULT.with(MetaStub.PROTOCOL, "tcp"));
                RefusedException e = assertThrows(RefusedException.class, () -> pinned.echoDoubles(new double[600_000]));
                assertEquals("size-limit", e.reason());
                assertTrue(e.getMessage().contains("nothing was sent"), e.getMessage());
                assertEquals(List.of("tcp"), protocols(), "refused, not repeated elsewhere");
                assertEquals(-1, calls.get(0).requestWireBytes(), "no byte left: " + calls.get(0));
                assertEquals(600_000, ConformanceComponent.stub(channel).echoDoubles(new double[600_000]).length,
                        "unpinned, the same call goes where it fits");
            }
        }
    }

    @Test
    void aStoppedTcpListenerFallsBackToSoap() {
        ConformanceImpl impl = new ConformanceImpl();
        try (ComponentServer server = ComponentServer.builder().build()) {
            ComponentEntry entry = server.export("Counter", ConformanceComponent.skeleton(impl));
            server.stopProtocol("tcp");
            try (MetaStub fixed = client(entry.endpoints(), true)) {
                assertEquals(3, ConformanceComponent.stub(fixed).increment(3));
            }
            assertEquals(List.of("tcp", "soap"), protocols());
            assertTrue(calls.get(1).fallback(), calls.get(1).reason());
            assertEquals(1, impl.increments.get());
        }
    }

    @Test
    void aConnectionLostAfterTheRunIsRepeatedOverSoapAndTheOperationRunsOnce() {
        ConformanceImpl impl = new ConformanceImpl();
        List<FaultProxy> proxy = new ArrayList<>(1);
        // after the operation ran over tcp, and before its answer leaves, the connection is reset
        try (ComponentServer server = ComponentServer.builder().interceptor((call, next) -> {
            Object result = next.proceed(call);
            if (call.protocol().equals("tcp") && !proxy.isEmpty()) {
                proxy.get(0).resetAll();
            }
            return result;
        }).build()) {
            ComponentEntry entry = server.export("Counter", ConformanceComponent.skeleton(impl));
            Endpoint tcp = entry.endpoint("tcp").orElseThrow();
            try (FaultProxy p = FaultProxy.to(tcp)) {
                List<Endpoint> endpoints = new ArrayList<>(entry.endpoints());
                endpoints.replaceAll(e -> e.protocol().equals("tcp") ? p.route(e) : e);
                try (MetaStub fixed = client(endpoints, true)) {
                    proxy.add(p);
                    assertEquals(5, ConformanceComponent.stub(fixed).increment(5), "the SOAP repeat answers with the first result");
                }
            }
            assertEquals(List.of("tcp", "soap"), protocols());
            assertTrue(calls.get(1).fallback(), calls.get(1).reason());
            assertEquals(1, impl.increments.get(), "the operation ran once");
        }
    }
}
