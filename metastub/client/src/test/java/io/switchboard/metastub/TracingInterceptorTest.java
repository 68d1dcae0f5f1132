package io.switchboard.metastub;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.opentelemetry.api.GlobalOpenTelemetry;
import io.opentelemetry.api.trace.Span;
import io.opentelemetry.api.trace.SpanKind;
import io.opentelemetry.api.trace.StatusCode;
import io.opentelemetry.api.trace.propagation.W3CTraceContextPropagator;
import io.opentelemetry.context.Scope;
import io.opentelemetry.context.propagation.ContextPropagators;
import io.opentelemetry.sdk.OpenTelemetrySdk;
import io.opentelemetry.sdk.testing.exporter.InMemorySpanExporter;
import io.opentelemetry.sdk.trace.SdkTracerProvider;
import io.opentelemetry.sdk.trace.data.SpanData;
import io.opentelemetry.sdk.trace.export.SimpleSpanProcessor;
import io.switchboard.protocol.Endpoint;
import io.switchboard.protocol.ServerCallContext;
import io.switchboard.protocol.ServerSettings;
import io.switchboard.protocol.Skeleton;
import io.switchboard.protocol.TraceContext;
import io.switchboard.protocol.TransportException;
import io.switchboard.protocol.spi.ProtocolServer;
import io.switchboard.protocol.spi.Protocols;
import io.switchboard.testing.CountingSkeleton;
import io.switchboard.testing.conformance.ConformanceComponent;
import io.switchboard.testing.conformance.ConformanceImpl;
import io.switchboard.testing.conformance.ConformanceStub;
import java.lang.management.ManagementFactory;
import java.util.Comparator;
import java.util.List;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * The client's spans: one per attempt, with protocol, reason, attempt and fallback, the failed
 * one in ERROR, each sending its own context to the server; and no tracing, at no cost, when
 * no OpenTelemetry SDK is registered.
 */
class TracingInterceptorTest {
    private final InMemorySpanExporter exporter = InMemorySpanExporter.create();
    private final OpenTelemetrySdk sdk = OpenTelemetrySdk.builder()
            .setTracerProvider(SdkTracerProvider.builder().addSpanProcessor(SimpleSpanProcessor.create(exporter)).build())
            .setPropagators(ContextPropagators.create(W3CTraceContextPropagator.getInstance()))
            .build();
    private final AtomicReference<TraceContext> seenBySoap = new AtomicReference<>();
    private ProtocolServer soap;
    private ProtocolServer inproc;
    private Endpoint fast;
    private Endpoint soapEndpoint;

    @BeforeEach
    void start() {
        Skeleton skeleton = ConformanceComponent.skeleton(new ConformanceImpl());
        soap = Protocols.get("soap").newServer(ServerSettings.defaults());
        inproc = Protocols.get("inproc").newServer(ServerSettings.defaults());
        fast = inproc.export(skeleton);
        soapEndpoint = soap.export(new CountingSkeleton(skeleton, "soap", new ConcurrentHashMap<>(),
                label -> seenBySoap.set(ServerCallContext.trace())));
    }

    @AfterEach
    void stop() {
        InProcessTestProtocol.FAILURES.clear();
        soap.close();
        inproc.close();
        sdk.close();
        GlobalOpenTelemetry.resetForTest();
    }

    private MetaStub.Builder channel() {
        return MetaStub.builder(ConformanceComponent.DESCRIPTOR).protocols("inproc", "soap")
                .endpoints(List.of(fast, soapEndpoint)).policy(new FirstCommonPolicy());
    }

    @Test
    void everyAttemptIsAClientSpanAndTheFallbackSendsItsOwnContext() {
        InProcessTestProtocol.FAILURES.put(fast.address(), InProcessTestProtocol.Failure.NOT_DELIVERED);
        Span root = sdk.getTracer("test").spanBuilder("caller").startSpan();
        try (MetaStub channel = channel().tracing(sdk).build(); Scope scope = root.makeCurrent()) {
            assertEquals(4.5, ConformanceComponent.stub(channel).echoDoubles(new double[] {4.5})[0]);
        } finally {
            root.end();
        }
        List<SpanData> attempts = exporter.getFinishedSpanItems().stream().filter(s -> s.getKind() == SpanKind.CLIENT)
                .sorted(Comparator.comparing(s -> s.getAttributes().get(TracingInterceptor.ATTEMPT))).toList();
        assertEquals(2, attempts.size(), attempts.toString());
        SpanData failed = attempts.get(0);
        SpanData fallback = attempts.get(1);
        assertEquals("Conformance/echoDoubles", failed.getName());
        assertEquals("inproc", failed.getAttributes().get(TracingInterceptor.PROTOCOL));
        assertFalse(failed.getAttributes().get(TracingInterceptor.FALLBACK));
        assertEquals(StatusCode.ERROR, failed.getStatus().getStatusCode());
        assertEquals(TransportException.class.getName(), failed.getAttributes().get(TracingInterceptor.ERROR_TYPE));
        assertEquals("soap", fallback.getAttributes().get(TracingInterceptor.PROTOCOL));
        assertEquals(1L, fallback.getAttributes().get(TracingInterceptor.ATTEMPT));
        assertTrue(fallback.getAttributes().get(TracingInterceptor.FALLBACK));
        assertTrue(fallback.getAttributes().get(TracingInterceptor.REASON).startsWith("fallback"),
                fallback.getAttributes().get(TracingInterceptor.REASON));
        assertEquals(StatusCode.UNSET, fallback.getStatus().getStatusCode());
        assertEquals("echoDoubles", fallback.getAttributes().get(TracingInterceptor.RPC_METHOD));
        assertEquals(failed.getAttributes().get(TracingInterceptor.CALL_ID),
                fallback.getAttributes().get(TracingInterceptor.CALL_ID), "one call, one id");
        for (SpanData attempt : attempts) {
            assertEquals(root.getSpanContext().getSpanId(), attempt.getParentSpanId());
            assertEquals(root.getSpanContext().getTraceId(), attempt.getTraceId());
        }
        String sent = seenBySoap.get().traceparent();
        assertEquals("00-" + fallback.getTraceId() + "-" + fallback.getSpanId() + "-01", sent,
                "the SOAP server got the fallback attempt's context");
    }

    @Test
    void withoutAnSdkNothingIsTracedAndACallAllocatesNothingMore() {
        GlobalOpenTelemetry.resetForTest();
        assertTrue(TracingInterceptor.isNoop(GlobalOpenTelemetry.get()));
        try (MetaStub probe = channel().build()) {
            InProcessTestProtocol.FAILURES.put(fast.address(), InProcessTestProtocol.Failure.NOT_DELIVERED);
            ConformanceComponent.stub(probe).ping();   // falls back to SOAP
            assertNull(seenBySoap.get(), "no trace context on the wire");
            InProcessTestProtocol.FAILURES.clear();
        }
        assertTrue(exporter.getFinishedSpanItems().isEmpty());
        try (MetaStub byDefault = channel().build(); MetaStub off = channel().tracing(null).build();
             MetaStub on = channel().tracing(sdk).build()) {
            ConformanceStub[] stubs = {ConformanceComponent.stub(byDefault), ConformanceComponent.stub(off),
                ConformanceComponent.stub(on)};
            double[] bytes = {Double.MAX_VALUE, Double.MAX_VALUE, Double.MAX_VALUE};
            for (int round = 0; round < 8; round++) {   // interleaved, so that each is as warm as the others
                for (int i = 0; i < stubs.length; i++) {
                    bytes[i] = Math.min(bytes[i], bytesPerCall(stubs[i]));
                }
            }
            System.out.printf("bytes allocated per in-process call: default (no SDK) %.0f, off %.0f, traced %.0f%n",
                    bytes[0], bytes[1], bytes[2]);
            assertTrue(bytes[0] <= bytes[1] + 16, bytes[0] + " against " + bytes[1]);
            assertTrue(bytes[2] > bytes[1] + 200, "the measure sees a span's cost: " + bytes[2] + " against " + bytes[1]);
        }
    }

    /** The bytes a call on this thread allocated, on average over a few thousand. */
    private static double bytesPerCall(ConformanceStub stub) {
        com.sun.management.ThreadMXBean threads = (com.sun.management.ThreadMXBean) ManagementFactory.getThreadMXBean();
        int calls = 3_000;
        long before = threads.getCurrentThreadAllocatedBytes();
        for (int i = 0; i < calls; i++) {
            stub.ping();
        }
        return (threads.getCurrentThreadAllocatedBytes() - before) / (double) calls;
    }
}
