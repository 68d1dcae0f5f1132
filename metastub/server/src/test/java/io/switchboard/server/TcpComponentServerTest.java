package io.switchboard.server;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.switchboard.metastub.CallRecord;
import io.netty.channel.epoll.Epoll;
import io.opentelemetry.api.trace.SpanKind;
import io.opentelemetry.sdk.OpenTelemetrySdk;
import io.opentelemetry.sdk.testing.exporter.InMemorySpanExporter;
import io.opentelemetry.sdk.trace.SdkTracerProvider;
import io.opentelemetry.sdk.trace.data.SpanData;
import io.opentelemetry.sdk.trace.export.SimpleSpanProcessor;
import io.switchboard.metastub.AdaptivePolicy;
import io.switchboard.metastub.FixedPolicy;
import io.switchboard.metastub.MetaStub;
import io.switchboard.metastub.SelectionPolicy;
import io.switchboard.metastub.SizePolicy;
import io.switchboard.metastub.TracingInterceptor;
import io.switchboard.protocol.CallOptions;
import io.switchboard.protocol.Endpoint;
import io.switchboard.protocol.RefusedException;
import io.switchboard.registry.ComponentEntry;
import io.switchboard.testing.FaultProxy;
import io.switchboard.testing.conformance.ConformanceComponent;
import io.switchboard.testing.conformance.ConformanceImpl;
import io.switchboard.testing.conformance.ConformanceStub;
import io.switchboard.testing.conformance.EchoDoublesResponse;
import java.io.IOException;
import java.net.BindException;
import java.net.ConnectException;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import org.junit.jupiter.api.Test;

/**
 * A component server with tcp on its class path serves a tcp endpoint beside SOAP and gRPC and
 * lists it in the entry; policies send small calls there and bulk over gRPC, a call pinned to it
 * or under {@code fixed:tcp} goes there up to its frame limit, and a call falls back to SOAP when
 * tcp is down, running a non-idempotent operation once.
 */
class TcpComponentServerTest {
    private final List<CallRecord> calls = new CopyOnWriteArrayList<>();

    private List<String> protocols() {
        return calls.stream().map(CallRecord::protocol).toList();
    }

    /** A meta-stub with {@code policy}, or the default one (adaptive) when null. */
    private MetaStub client(List<Endpoint> endpoints, SelectionPolicy policy) {
        MetaStub.Builder b = MetaStub.builder(ConformanceComponent.DESCRIPTOR).endpoints(endpoints).listener(calls::add)
                .serverRecognisesCallIds(true).preferInProcess(false);   // the server is in this JVM: not in process here
        return (policy != null ? b.policy(policy) : b).build();
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
            try (MetaStub adaptive = client(entry.endpoints(), null); MetaStub fixed = client(entry.endpoints(), new FixedPolicy("tcp"))) {
                ConformanceStub byDefault = ConformanceComponent.stub(adaptive);
                byDefault.withOptions(CallOptions.DEFAULT.with(MetaStub.PROTOCOL, "tcp")).increment(1);
                ConformanceComponent.stub(fixed).increment(1);
                assertEquals(List.of("tcp", "tcp"), protocols());
                assertEquals(List.of("pinned on call", "fixed:tcp (stub policy)"), calls.stream().map(CallRecord::reason).toList());
                assertEquals(2, impl.increments.get());
                calls.clear();
                // 800 KB: more than policies send over tcp, within its frame limit, where fixed:tcp goes
                assertEquals(100_000, ConformanceComponent.stub(fixed).echoDoubles(new double[100_000]).length);
                assertEquals(List.of("tcp"), protocols());
            }
        }
    }

    @Test
    void policiesSendSmallCallsOverTcpAndBulkOverGrpc() {
        try (ComponentServer server = ComponentServer.builder().build()) {
            ComponentEntry entry = server.export("Counter", ConformanceComponent.skeleton(new ConformanceImpl()));
            for (SelectionPolicy policy : List.of(new SizePolicy(), new AdaptivePolicy())) {
                calls.clear();
                try (MetaStub channel = client(entry.endpoints(), policy)) {
                    ConformanceStub stub = ConformanceComponent.stub(channel);
                    stub.ping();
                    stub.echoDoubles(new double[10]);
                    assertEquals(List.of("tcp", "tcp"), protocols(), policy.name() + " sends small calls over tcp");
                    calls.clear();
                    for (int i = 0; i < 3; i++) {
                        stub.echoDoubles(new double[300_000]);   // 2.4 MB: over tcp's 2 MiB for policies
                    }
                    assertEquals(List.of("grpc", "grpc", "grpc"), protocols(), policy.name() + " sends bulk over grpc");
                }
            }
        }
    }

    @Test
    void theCallTraceSaysWhichWayTcpWent() {
        InMemorySpanExporter exporter = InMemorySpanExporter.create();
        try (OpenTelemetrySdk sdk = OpenTelemetrySdk.builder().setTracerProvider(SdkTracerProvider.builder()
                .addSpanProcessor(SimpleSpanProcessor.create(exporter)).build()).build();
             ComponentServer server = ComponentServer.builder().build()) {
            ComponentEntry entry = server.export("Counter", ConformanceComponent.skeleton(new ConformanceImpl()));
            try (MetaStub channel = MetaStub.builder(ConformanceComponent.DESCRIPTOR).endpoints(entry.endpoints())
                    .policy(new FixedPolicy("tcp")).tracing(sdk).preferInProcess(false).build()) {
                ConformanceComponent.stub(channel).ping();
                ConformanceComponent.stub(channel).ping();
            }
            List<SpanData> spans = exporter.getFinishedSpanItems().stream().filter(s -> s.getKind() == SpanKind.CLIENT).toList();
            assertEquals(2, spans.size(), spans.toString());
            String expected = Epoll.isAvailable() ? "unix" : "tcp";   // without epoll the server has no Unix socket
            for (SpanData span : spans) {
                assertEquals("tcp", span.getAttributes().get(TracingInterceptor.PROTOCOL));
                assertEquals(expected, span.getAttributes().get(TracingInterceptor.VIA), span.toString());
            }
        }
    }

    @Test
    void aPinnedCallOverTheFrameLimitIsRefusedBeforeAnythingIsSent() {
        ConformanceImpl impl = new ConformanceImpl();
        try (ComponentServer server = ComponentServer.builder().build()) {
            ComponentEntry entry = server.export("Counter", ConformanceComponent.skeleton(impl));
            try (MetaStub channel = client(entry.endpoints(), null)) {
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
    void anAnswerOverTheFrameLimitIsRepeatedOverSoap() {
        java.util.concurrent.atomic.AtomicInteger runs = new java.util.concurrent.atomic.AtomicInteger();
        // a small request whose answer (600,000 doubles, 4.8 MB) is over tcp's 4 MiB frame
        try (ComponentServer server = ComponentServer.builder().interceptor((call, next) -> {
            runs.incrementAndGet();
            EchoDoublesResponse response = (EchoDoublesResponse) next.proceed(call);
            response.setValues(new double[600_000]);
            return response;
        }).build()) {
            ComponentEntry entry = server.export("Counter", ConformanceComponent.skeleton(new ConformanceImpl()));
            try (MetaStub fixed = client(entry.endpoints(), new FixedPolicy("tcp"))) {
                assertEquals(600_000, ConformanceComponent.stub(fixed).echoDoubles(new double[] {1}).length);
            }
            assertEquals(List.of("tcp", "soap"), protocols());
            assertTrue(calls.get(0).error().contains("over the tcp frame limit"), calls.get(0).error());
            assertTrue(calls.get(1).fallback(), calls.get(1).reason());
            assertEquals(2, runs.get(), "echoDoubles is idempotent: the SOAP repeat runs it again");
        }
    }

    @Test
    void aStoppedTcpListenerFallsBackToSoap() {
        ConformanceImpl impl = new ConformanceImpl();
        try (ComponentServer server = ComponentServer.builder().build()) {
            ComponentEntry entry = server.export("Counter", ConformanceComponent.skeleton(impl));
            server.stopProtocol("tcp");
            try (MetaStub fixed = client(entry.endpoints(), new FixedPolicy("tcp"))) {
                assertEquals(3, ConformanceComponent.stub(fixed).increment(3));
            }
            assertEquals(List.of("tcp", "soap"), protocols());
            assertTrue(calls.get(1).fallback(), calls.get(1).reason());
            assertEquals(1, impl.increments.get());
        }
    }

    /**
     * A stopped listener's port stays bound until the server closes: its endpoint refuses, and no
     * other listener (such as another test's, given any free port) takes the port and receives
     * the calls meant for the stopped one.
     */
    @Test
    void aStoppedListenersPortIsHeldUntilTheServerCloses() throws Exception {
        List<Integer> ports = new ArrayList<>();
        try (ComponentServer server = ComponentServer.builder().build()) {
            ComponentEntry entry = server.export("Counter", ConformanceComponent.skeleton(new ConformanceImpl()));
            for (String protocol : List.of("tcp", "grpc")) {
                server.stopProtocol(protocol);
                ports.add(entry.endpoint(protocol).orElseThrow().uri().getPort());
            }
            for (int port : ports) {
                assertThrows(ConnectException.class, () -> new Socket("127.0.0.1", port).close(),
                        "port " + port + " refuses");
                assertThrows(BindException.class, () -> listenOn(port), "no other listener takes port " + port);
            }
        }
        for (int port : ports) {
            listenOn(port);   // given back when the server closed
        }
    }

    private static void listenOn(int port) throws IOException {
        try (ServerSocket listener = new ServerSocket()) {
            listener.setReuseAddress(false);
            listener.bind(new InetSocketAddress(port));
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
                try (MetaStub fixed = client(endpoints, new FixedPolicy("tcp"))) {
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
