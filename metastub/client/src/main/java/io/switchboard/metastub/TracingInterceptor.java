package io.switchboard.metastub;

import io.opentelemetry.api.OpenTelemetry;
import io.opentelemetry.api.common.AttributeKey;
import io.opentelemetry.api.trace.Span;
import io.opentelemetry.api.trace.SpanKind;
import io.opentelemetry.api.trace.StatusCode;
import io.opentelemetry.api.trace.Tracer;
import io.opentelemetry.api.trace.TracerProvider;
import io.opentelemetry.context.Context;
import io.opentelemetry.context.Scope;
import io.opentelemetry.context.propagation.TextMapPropagator;
import io.opentelemetry.context.propagation.TextMapSetter;
import io.switchboard.protocol.TraceContext;
import io.switchboard.protocol.spi.Transport;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;

/**
 * OpenTelemetry's client span of every attempt of a call: kind CLIENT, named
 * {@code Component/operation}, with the attempt's protocol, why it was chosen, its number and
 * whether it is the failsafe's fallback; status ERROR with {@code error.type} when the attempt
 * fails. A call that falls back from gRPC to SOAP is two sibling spans, attempts 0 and 1, the
 * second with {@code switchboard.fallback=true}. The span is current while the attempt goes down
 * the chain, and its W3C context goes into the call's options ({@link TraceContext#OPTION}),
 * which SOAP and gRPC send along: the server's span is its child.
 *
 * <p>Attributes: {@code rpc.system} ({@code switchboard}), {@code rpc.service},
 * {@code rpc.method}, {@code switchboard.protocol}, {@code switchboard.reason},
 * {@code switchboard.attempt}, {@code switchboard.fallback}, {@code switchboard.call_id}, and
 * {@code switchboard.via} when the protocol has more than one way to its server (tcp: {@code unix}
 * over the server's Unix domain socket, else {@code tcp}). Never the request, the response or an
 * exception's message.
 *
 * <p>A meta-stub adds it by itself when an OpenTelemetry SDK is registered globally
 * ({@link io.opentelemetry.api.GlobalOpenTelemetry}) when the stub is built, or when one is
 * given to {@link MetaStub.Builder#tracing}; with the no-op OpenTelemetry it is not in the chain
 * at all, so tracing that is off costs nothing.
 *
 * <pre>{@code
 * MetaStub channel = MetaStub.builder(EchoComponent.DESCRIPTOR).endpoints(entry.endpoints())
 *         .tracing(openTelemetrySdk).build();
 * }</pre>
 */
public final class TracingInterceptor implements ClientInterceptor {
    /** The instrumentation scope of the client's and the server's spans. */
    public static final String INSTRUMENTATION = "io.switchboard";
    public static final AttributeKey<String> RPC_SYSTEM = AttributeKey.stringKey("rpc.system");
    public static final AttributeKey<String> RPC_SERVICE = AttributeKey.stringKey("rpc.service");
    public static final AttributeKey<String> RPC_METHOD = AttributeKey.stringKey("rpc.method");
    public static final AttributeKey<String> ERROR_TYPE = AttributeKey.stringKey("error.type");
    public static final AttributeKey<String> PROTOCOL = AttributeKey.stringKey("switchboard.protocol");
    public static final AttributeKey<String> REASON = AttributeKey.stringKey("switchboard.reason");
    public static final AttributeKey<Long> ATTEMPT = AttributeKey.longKey("switchboard.attempt");
    public static final AttributeKey<Boolean> FALLBACK = AttributeKey.booleanKey("switchboard.fallback");
    public static final AttributeKey<String> CALL_ID = AttributeKey.stringKey("switchboard.call_id");
    public static final AttributeKey<String> VIA = AttributeKey.stringKey("switchboard.via");

    private static final TextMapSetter<String[]> SETTER = (carrier, key, value) -> {
        if (TraceContext.TRACEPARENT.equals(key)) {
            carrier[0] = value;
        } else if (TraceContext.TRACESTATE.equals(key)) {
            carrier[1] = value;
        }
    };

    private final Tracer tracer;
    private final TextMapPropagator propagator;

    public TracingInterceptor(OpenTelemetry openTelemetry) {
        this.tracer = openTelemetry.getTracer(INSTRUMENTATION);
        this.propagator = openTelemetry.getPropagators().getTextMapPropagator();
    }

    /** Whether {@code openTelemetry} is null or the no-op one (no SDK registered): then nothing is traced. */
    public static boolean isNoop(OpenTelemetry openTelemetry) {
        return openTelemetry == null || openTelemetry.getTracerProvider() == TracerProvider.noop();
    }

    @Override
    public CompletableFuture<Object> intercept(ClientCall call, Chain next) {
        Span span = tracer.spanBuilder(call.component() + "/" + call.operation().name())
                .setSpanKind(SpanKind.CLIENT)
                .setAttribute(RPC_SYSTEM, "switchboard")
                .setAttribute(RPC_SERVICE, call.component())
                .setAttribute(RPC_METHOD, call.operation().name())
                .setAttribute(PROTOCOL, call.protocol())
                .setAttribute(REASON, call.reason())
                .setAttribute(ATTEMPT, (long) call.attempt())
                .setAttribute(FALLBACK, call.fallback())
                .startSpan();
        if (call.options().callId() != null) {
            span.setAttribute(CALL_ID, call.options().callId());
        }
        // kept for the end: a step above may move the call to another attempt before this one's end is seen
        Transport transport = call.transport;
        CompletableFuture<Object> outcome;
        try (Scope scope = span.makeCurrent()) {
            String[] headers = new String[2];
            propagator.inject(Context.current(), headers, SETTER);
            TraceContext trace = TraceContext.of(headers[0], headers[1]);
            if (trace != null) {
                call.options(call.options().with(TraceContext.OPTION, trace));
            }
            outcome = next.proceed(call);
        } catch (RuntimeException | Error e) {
            end(span, e, transport);
            throw e;
        }
        outcome.whenComplete((response, failure) -> end(span, failure, transport));
        return outcome;
    }

    private static void end(Span span, Throwable failure, Transport transport) {
        String via = transport == null ? null : transport.via();
        if (via != null) {
            span.setAttribute(VIA, via);
        }
        if (failure != null) {
            Throwable cause = failure instanceof CompletionException && failure.getCause() != null
                    ? failure.getCause() : failure;
            span.setAttribute(ERROR_TYPE, cause.getClass().getName());
            span.setStatus(StatusCode.ERROR, cause.getClass().getSimpleName());
        }
        span.end();
    }
}
