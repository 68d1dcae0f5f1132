package io.switchboard.server;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.opentelemetry.api.trace.Span;
import io.opentelemetry.api.trace.SpanKind;
import io.opentelemetry.api.trace.StatusCode;
import io.opentelemetry.api.trace.propagation.W3CTraceContextPropagator;
import io.opentelemetry.context.propagation.ContextPropagators;
import io.opentelemetry.sdk.OpenTelemetrySdk;
import io.opentelemetry.sdk.testing.exporter.InMemorySpanExporter;
import io.opentelemetry.sdk.trace.SdkTracerProvider;
import io.opentelemetry.sdk.trace.data.SpanData;
import io.opentelemetry.sdk.trace.export.SimpleSpanProcessor;
import io.switchboard.idl.runtime.OperationDescriptor;
import io.switchboard.metastub.TracingInterceptor;
import io.switchboard.protocol.ServerCall;
import io.switchboard.protocol.ServerCallContext;
import io.switchboard.protocol.TraceContext;
import io.switchboard.testing.conformance.ConformanceComponent;
import java.util.List;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/** The tracing step alone, with a fake next step and an in-memory exporter. */
class TracingServerInterceptorTest {
    private static final OperationDescriptor INCREMENT = ConformanceComponent.DESCRIPTOR.operation("increment");
    private static final String TRACE_ID = "4bf92f3577b34da6a3ce929d0e0e4736";
    private static final String PARENT_ID = "00f067aa0ba902b7";

    private final InMemorySpanExporter exporter = InMemorySpanExporter.create();
    private final OpenTelemetrySdk sdk = OpenTelemetrySdk.builder()
            .setTracerProvider(SdkTracerProvider.builder().addSpanProcessor(SimpleSpanProcessor.create(exporter)).build())
            .setPropagators(ContextPropagators.create(W3CTraceContextPropagator.getInstance()))
            .build();
    private final TracingServerInterceptor tracing = new TracingServerInterceptor(sdk);

    @AfterEach
    void close() {
        sdk.close();
    }

    private static ServerCall call(String protocol, String callId) {
        return new ServerCall("Served", ConformanceComponent.DESCRIPTOR, protocol, INCREMENT, new Object(), callId);
    }

    @Test
    void aServerSpanChildOfTheTraceparentTheCallArrivedWith() throws Exception {
        Object answer = new Object();
        AtomicReference<String> currentInside = new AtomicReference<>();
        Object back;
        try (ServerCallContext.Scope scope = ServerCallContext.enter(null,
                TraceContext.of("00-" + TRACE_ID + "-" + PARENT_ID + "-01", null))) {
            back = tracing.intercept(call("grpc", "call-7"), c -> {
                currentInside.set(Span.current().getSpanContext().getSpanId());
                return answer;
            });
        }

        assertSame(answer, back);
        List<SpanData> spans = exporter.getFinishedSpanItems();
        assertEquals(1, spans.size());
        SpanData span = spans.get(0);
        assertEquals(SpanKind.SERVER, span.getKind());
        assertEquals("Conformance/increment", span.getName(), "named after the interface, not the served name");
        assertEquals(TRACE_ID, span.getTraceId(), "the caller's trace");
        assertEquals(PARENT_ID, span.getParentSpanId(), "the caller's span is the parent");
        assertEquals(span.getSpanId(), currentInside.get(), "current while the steps below run");
        assertEquals("switchboard", span.getAttributes().get(TracingInterceptor.RPC_SYSTEM));
        assertEquals("Conformance", span.getAttributes().get(TracingInterceptor.RPC_SERVICE));
        assertEquals("increment", span.getAttributes().get(TracingInterceptor.RPC_METHOD));
        assertEquals("grpc", span.getAttributes().get(TracingInterceptor.PROTOCOL));
        assertEquals("call-7", span.getAttributes().get(TracingInterceptor.CALL_ID));
        assertEquals(StatusCode.UNSET, span.getStatus().getStatusCode());
    }

    @Test
    void withoutATraceContextTheSpanIsARootAndWithoutACallIdHasNone() throws Exception {
        tracing.intercept(call("soap", null), c -> null);

        SpanData span = exporter.getFinishedSpanItems().get(0);
        assertFalse(span.getParentSpanContext().isValid(), "no caller's context: a new trace");
        assertNull(span.getAttributes().get(TracingInterceptor.CALL_ID));
        assertEquals("soap", span.getAttributes().get(TracingInterceptor.PROTOCOL));
    }

    @Test
    void aFailureBelowMarksTheSpanAndGoesOnToTheCaller() {
        SecurityException refusal = new SecurityException("not for you");
        SecurityException thrown = assertThrows(SecurityException.class,
                () -> tracing.intercept(call("soap", "c"), c -> {
                    throw refusal;
                }));

        assertSame(refusal, thrown);
        SpanData span = exporter.getFinishedSpanItems().get(0);
        assertEquals(StatusCode.ERROR, span.getStatus().getStatusCode());
        assertEquals(SecurityException.class.getName(), span.getAttributes().get(TracingInterceptor.ERROR_TYPE));
        assertFalse(span.getStatus().getDescription().contains("not for you"), "never an exception's message");
    }

    @Test
    void aRefusalHasNoSpan() {
        tracing.refused(new ServerCall("Served", ConformanceComponent.DESCRIPTOR, "soap", INCREMENT, null, null), "malformed");

        assertTrue(exporter.getFinishedSpanItems().isEmpty());
    }
}
