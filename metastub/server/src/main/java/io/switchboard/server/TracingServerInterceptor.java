package io.switchboard.server;

import io.opentelemetry.api.OpenTelemetry;
import io.opentelemetry.api.trace.Span;
import io.opentelemetry.api.trace.SpanKind;
import io.opentelemetry.api.trace.StatusCode;
import io.opentelemetry.api.trace.Tracer;
import io.opentelemetry.context.Context;
import io.opentelemetry.context.Scope;
import io.opentelemetry.context.propagation.TextMapGetter;
import io.opentelemetry.context.propagation.TextMapPropagator;
import io.switchboard.idl.runtime.DeclaredFault;
import io.switchboard.metastub.TracingInterceptor;
import io.switchboard.protocol.ServerCall;
import io.switchboard.protocol.ServerCallContext;
import io.switchboard.protocol.ServerInterceptor;
import io.switchboard.protocol.TraceContext;
import java.util.List;

/**
 * OpenTelemetry's server span of every call a protocol server hands a component, the first step of
 * the server chain: kind SERVER,
 * named {@code Component/operation}, child of the trace context the call arrived with
 * ({@link ServerCallContext#trace()}: the {@code sb:trace} SOAP header or the gRPC
 * {@code traceparent} metadata), or of the current context when it came without one (an
 * in-process call on the caller's thread). The span is current while the operation runs, so the
 * calls it makes through meta-stubs are its children: a client calling the optimizer, which calls
 * the simulator, is one trace.
 *
 * <p>Attributes: {@code rpc.system}, {@code rpc.service}, {@code rpc.method},
 * {@code switchboard.protocol} (the protocol it arrived over), {@code switchboard.call_id};
 * status ERROR with {@code error.type} when a step below or the operation throws (a declared fault
 * too, and an interceptor's refusal). Never the request, the response or an exception's message.
 * A request the protocol refused before it ran has no span: the refusal goes on to the steps
 * below (the call figures count it).
 *
 * <p>{@link ComponentServer} puts one first in every chain when tracing is on
 * ({@link ComponentServer.Builder#tracing}); one instance serves every protocol. API.
 *
 * <pre>{@code
 * ServerInterceptor tracing = new TracingServerInterceptor(openTelemetry);
 * Endpoint soap = soapServer.export(ServerInterceptorChain.of("Echo", "soap", List.of(tracing), skeleton));
 * }</pre>
 */
public final class TracingServerInterceptor implements ServerInterceptor {
    private static final TextMapGetter<TraceContext> GETTER = new TextMapGetter<>() {
        @Override
        public Iterable<String> keys(TraceContext carrier) {
            return List.of(TraceContext.TRACEPARENT, TraceContext.TRACESTATE);
        }

        @Override
        public String get(TraceContext carrier, String key) {
            if (carrier == null) {
                return null;
            }
            return TraceContext.TRACEPARENT.equals(key) ? carrier.traceparent()
                    : TraceContext.TRACESTATE.equals(key) ? carrier.tracestate() : null;
        }
    };

    private final Tracer tracer;
    private final TextMapPropagator propagator;

    public TracingServerInterceptor(OpenTelemetry openTelemetry) {
        this.tracer = openTelemetry.getTracer(TracingInterceptor.INSTRUMENTATION);
        this.propagator = openTelemetry.getPropagators().getTextMapPropagator();
    }

    @Override
    public Object intercept(ServerCall call, Chain next) throws DeclaredFault {
        TraceContext trace = ServerCallContext.trace();
        Context parent = trace == null ? Context.current() : propagator.extract(Context.current(), trace, GETTER);
        String service = call.descriptor().name();
        String method = call.operation().name();
        Span span = tracer.spanBuilder(service + "/" + method)
                .setParent(parent)
                .setSpanKind(SpanKind.SERVER)
                .setAttribute(TracingInterceptor.RPC_SYSTEM, "switchboard")
                .setAttribute(TracingInterceptor.RPC_SERVICE, service)
                .setAttribute(TracingInterceptor.RPC_METHOD, method)
                .setAttribute(TracingInterceptor.PROTOCOL, call.protocol())
                .startSpan();
        if (call.callId() != null) {
            span.setAttribute(TracingInterceptor.CALL_ID, call.callId());
        }
        try (Scope scope = span.makeCurrent()) {
            return next.proceed(call);
        } catch (DeclaredFault | RuntimeException | Error e) {
            span.setAttribute(TracingInterceptor.ERROR_TYPE, e.getClass().getName());
            span.setStatus(StatusCode.ERROR, e.getClass().getSimpleName());
            throw e;
        } finally {
            span.end();
        }
    }
}
