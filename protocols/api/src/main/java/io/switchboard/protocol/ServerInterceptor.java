package io.switchboard.protocol;

import io.switchboard.idl.runtime.DeclaredFault;

/**
 * One step of a call on the server, in the manner of grpc-java's {@code ServerInterceptor} and
 * Finagle's filters, the server's counterpart of the meta-stub's {@code ClientInterceptor}: it may
 * look at the {@link ServerCall}, hand it on with {@link Chain#proceed} (or not, refusing it), and
 * look at or replace the outcome. A {@link ServerInterceptorChain} links such steps once, in front
 * of a component's {@link Skeleton}, per protocol. API.
 *
 * <p>{@code ComponentServer} (module {@code metastub/server}) builds every exported component's
 * chain in one place (its class comment lists it): the server span, the authorization policy
 * (with one), the call figures, the de-duplication of call ids, your interceptors
 * ({@code ComponentServer.Builder.interceptor}), the benchmark's phase marks, then the
 * component. Server calls are blocking: {@code proceed} returns when every step below has
 * finished, on the thread the protocol runs the call on. One
 * instance may serve every call of every protocol concurrently: keep per-call state in local
 * variables.
 *
 * <p>To refuse a call, throw instead of proceeding: a {@link DeclaredFault} of the operation
 * reaches the client as that fault; any other exception as a
 * {@link RemoteInvocationException} carrying its message (and, over gRPC and the local protocol,
 * its class name as {@link RemoteInvocationException#remoteType()}).
 *
 * <pre>{@code
 * ServerInterceptor readOnly = (call, next) -> {
 *     if (!call.operation().idempotent()) {
 *         throw new SecurityException(call.operation().name() + " is refused: this server is read-only");
 *     }
 *     return next.proceed(call);
 * };
 * ComponentServer server = ComponentServer.builder().interceptor(readOnly).build();
 * }</pre>
 */
@FunctionalInterface
public interface ServerInterceptor {
    /**
     * Handles {@code call}, usually by handing it to {@code next}. Returns the response message
     * (null for a one-way operation).
     *
     * @throws DeclaredFault the operation's declared fault, to be sent back as such
     */
    Object intercept(ServerCall call, Chain next) throws DeclaredFault;

    /**
     * Told that the protocol refused a request for {@code call}'s operation before it ran
     * (malformed, over a limit; {@code reason} is the refusal's code, e.g. {@code malformed}); the
     * call has no request and no call id. Every step of the chain is told, in order, then the
     * skeleton ({@link Skeleton#refused}). Does nothing by default; must not throw.
     */
    default void refused(ServerCall call, String reason) {
    }

    /** The rest of the chain after one interceptor. */
    @FunctionalInterface
    interface Chain {
        Object proceed(ServerCall call) throws DeclaredFault;
    }
}
