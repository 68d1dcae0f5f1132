package io.switchboard.server;

import static org.junit.jupiter.api.Assertions.assertEquals;

import io.opentelemetry.api.trace.Span;
import io.opentelemetry.api.trace.SpanKind;
import io.opentelemetry.api.trace.propagation.W3CTraceContextPropagator;
import io.opentelemetry.context.Scope;
import io.opentelemetry.context.propagation.ContextPropagators;
import io.opentelemetry.sdk.OpenTelemetrySdk;
import io.opentelemetry.sdk.testing.exporter.InMemorySpanExporter;
import io.opentelemetry.sdk.trace.SdkTracerProvider;
import io.opentelemetry.sdk.trace.data.SpanData;
import io.opentelemetry.sdk.trace.export.SimpleSpanProcessor;
import io.switchboard.metastub.MetaStub;
import io.switchboard.metastub.TracingInterceptor;
import io.switchboard.protocol.CallOptions;
import io.switchboard.protocol.ServerCallContext;
import io.switchboard.registry.ComponentEntry;
import io.switchboard.testing.conformance.ConformanceComponent;
import io.switchboard.testing.conformance.ConformanceImpl;
import io.switchboard.testing.conformance.ConformanceStub;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * client → A → B with tracing on every hop, where A's operation makes its call to B on a pool's
 * thread through {@link ServerCallContext#propagating}: B's span is in the caller's trace, a child
 * of the client span made on A's pool, itself a child of A's server span. Without the
 * OpenTelemetry carrier the call on the pool would start a trace of its own.
 */
class TracedHandOverTest {
    private static final InMemorySpanExporter EXPORTER = InMemorySpanExporter.create();
    private static final OpenTelemetrySdk SDK = OpenTelemetrySdk.builder()
            .setTracerProvider(SdkTracerProvider.builder().addSpanProcessor(SimpleSpanProcessor.create(EXPORTER)).build())
            .setPropagators(ContextPropagators.create(W3CTraceContextPropagator.getInstance()))
            .build();
    private static final List<ComponentServer> servers = new ArrayList<>();
    private static final List<MetaStub> stubs = new ArrayList<>();
    private static final HandedOverCallsTest.Relay A = new HandedOverCallsTest.Relay();
    private static ComponentEntry a;
    private static ComponentEntry b;

    @BeforeAll
    static void serve() {
        a = serve("A", A);
        b = serve("B", new ConformanceImpl());
    }

    @AfterAll
    static void stop() {
        A.pool.shutdownNow();
        stubs.forEach(MetaStub::close);
        servers.forEach(ComponentServer::close);
        SDK.close();
    }

    private static ComponentEntry serve(String name, ConformanceImpl component) {
        ComponentServer server = ComponentServer.builder().tracing(SDK).build();
        servers.add(server);
        return server.export(name, ConformanceComponent.skeleton(component));
    }

    private static ConformanceStub stub(ComponentEntry entry, String protocol) {
        MetaStub channel = MetaStub.builder(ConformanceComponent.DESCRIPTOR).endpoints(entry.endpoints())
                .serverRecognisesCallIds(true).tracing(SDK).build();
        stubs.add(channel);
        return ConformanceComponent.stub(channel).withOptions(CallOptions.DEFAULT.with(MetaStub.PROTOCOL, protocol));
    }

    @ParameterizedTest(name = "A calls B over {0}")
    @ValueSource(strings = {"tcp", "grpc", "soap"})
    void theCallOnThePoolIsAChildOfTheOperationsSpan(String toB) {
        A.next = stub(b, toB);
        ConformanceStub toA = stub(a, "tcp");
        EXPORTER.reset();
        Span root = SDK.getTracer("test").spanBuilder("caller").startSpan();
        try (Scope scope = root.makeCurrent()) {
            toA.spin(new double[] {1}, 1);
        } finally {
            root.end();
        }
        String traceId = root.getSpanContext().getTraceId();
        List<SpanData> spans = EXPORTER.getFinishedSpanItems();
        SpanData callerClient = childOf(spans, root.getSpanContext().getSpanId(), SpanKind.CLIENT);
        SpanData aServer = childOf(spans, callerClient.getSpanId(), SpanKind.SERVER);
        SpanData onPool = childOf(spans, aServer.getSpanId(), SpanKind.CLIENT);
        SpanData bServer = childOf(spans, onPool.getSpanId(), SpanKind.SERVER);
        assertEquals(toB, onPool.getAttributes().get(TracingInterceptor.PROTOCOL));
        assertEquals(toB, bServer.getAttributes().get(TracingInterceptor.PROTOCOL));
        for (SpanData span : List.of(callerClient, aServer, onPool, bServer)) {
            assertEquals(traceId, span.getTraceId(), "in the caller's trace: " + span);
        }
    }

    /** The one span of {@code kind} whose parent is {@code parentId}. */
    private static SpanData childOf(List<SpanData> spans, String parentId, SpanKind kind) {
        List<SpanData> found = spans.stream().filter(s -> s.getKind() == kind && s.getParentSpanId().equals(parentId)).toList();
        assertEquals(1, found.size(), () -> "one " + kind + " span under " + parentId + "; spans: " + spans.stream()
                .map(s -> s.getKind() + " " + s.getName() + " " + s.getTraceId() + "/" + s.getSpanId() + " under "
                        + s.getParentSpanId()).toList());
        return found.get(0);
    }
}
