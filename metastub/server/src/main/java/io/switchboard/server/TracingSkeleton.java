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
import io.switchboard.idl.runtime.OperationDescriptor;
import io.switchboard.idl.runtime.ServiceDescriptor;
import io.switchboard.metastub.TracingInterceptor;
import io.switchboard.protocol.ServerCallContext;
import io.switchboard.protocol.Skeleton;
import io.switchboard.protocol.TraceContext;
import java.util.List;
import java.util.Objects;

/**
 * OpenTelemetry's server span of every call a protocol server hands a component: kind SERVER,
 * named {@code Component/operation}, child of the trace context the call arrived with
 * ({@link ServerCallContext#trace()}: the {@code sb:trace} SOAP header or the gRPC
 * {@code traceparent} metadata), or of the current context when it came without one (an
 * in-process call on the caller's thread). The span is current while the operation runs, so the
 * calls it makes through meta-stubs are its children: a client calling the optimizer, which calls
 * the simulator, is one trace.
 *
 * <p>Attributes: {@code rpc.system}, {@code rpc.service}, {@code rpc.method},
 * {@code switchboard.protocol} (the protocol it arrived over), {@code switchboard.call_id};
 * status ERROR with {@code error.type} when the operation throws (a declared fault too). Never
 * the request, the response or an exception's message.
 *
 * <p>{@link ComponentServer} wraps each exported skeleton in one per protocol when tracing is on.
 *
 * <pre>{@code
 * Endpoint soap = soapServer.export(new TracingSkeleton(skeleton, "soap", openTelemetry));
 * }</pre>
 */
public final class TracingSkeleton implements Skeleton {
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

    private final Skeleton delegate;
    private final String protocol;
    private final Tracer tracer;
    private final TextMapPropagator propagator;

    public TracingSkeleton(Skeleton delegate, String protocol, OpenTelemetry openTelemetry) {
        this.delegate = Objects.requireNonNull(delegate, "delegate");
        this.protocol = protocol;
        this.tracer = openTelemetry.getTracer(TracingInterceptor.INSTRUMENTATION);
        this.propagator = openTelemetry.getPropagators().getTextMapPropagator();
    }

    @Override
    public ServiceDescriptor descriptor() {
        return delegate.descriptor();
    }

    @Override
    public Object invoke(OperationDescriptor operation, Object request) throws DeclaredFault {
        return invoke(operation, request, null);
    }

    /** A refusal the protocol reports runs nothing to trace: it goes on to the skeleton inside. */
    @Override
    public void refused(OperationDescriptor operation, String reason) {
        delegate.refused(operation, reason);
    }

    @Override
    public Object invoke(OperationDescriptor operation, Object request, String callId) throws DeclaredFault {
        TraceContext trace = ServerCallContext.trace();
        Context parent = trace == null ? Context.current() : propagator.extract(Context.current(), trace, GETTER);
        String service = delegate.descriptor().name();
        Span span = tracer.spanBuilder(service + "/" + operation.name())
                .setParent(parent)
                .setSpanKind(SpanKind.SERVER)
                .setAttribute(TracingInterceptor.RPC_SYSTEM, "switchboard")
                .setAttribute(TracingInterceptor.RPC_SERVICE, service)
                .setAttribute(TracingInterceptor.RPC_METHOD, operation.name())
                .setAttribute(TracingInterceptor.PROTOCOL, protocol)
                .startSpan();
        if (callId != null) {
            span.setAttribute(TracingInterceptor.CALL_ID, callId);
        }
        try (Scope scope = span.makeCurrent()) {
            return delegate.invoke(operation, request, callId);
        } catch (DeclaredFault | RuntimeException | Error e) {
            span.setAttribute(TracingInterceptor.ERROR_TYPE, e.getClass().getName());
            span.setStatus(StatusCode.ERROR, e.getClass().getSimpleName());
            throw e;
        } finally {
            span.end();
        }
    }
}
