package io.switchboard.registry.server;

import io.grpc.Context;
import io.grpc.Contexts;
import io.grpc.Grpc;
import io.grpc.Metadata;
import io.grpc.ServerCall;
import io.grpc.ServerCallHandler;
import io.grpc.ServerInterceptor;
import io.grpc.Status;
import io.switchboard.protocol.Peer;
import io.switchboard.protocol.PermissionDeniedException;
import io.switchboard.protocol.ServerCallContext;
import io.switchboard.protocol.TlsSettings;
import io.switchboard.protocol.TokenVerifier;
import io.switchboard.protocol.spi.CallerIdentity;
import io.switchboard.registry.WatchStreamMethod;
import javax.net.ssl.SSLSession;

/**
 * Who calls the registry's gRPC listener (watch streams, protobuf reads), settled once per call
 * as the component protocols settle it ({@link CallerIdentity}): the client certificate, unless a
 * bearer token verifies. A token that does not verify ends the call with {@code UNAUTHENTICATED}
 * before the registry sees it, and so does a connection whose client certificate is no longer
 * trusted (revoked, or its authority withdrawn, since its handshake). The peer travels in the
 * call's gRPC context.
 */
final class StreamCallers implements ServerInterceptor {
    private static final Context.Key<Peer> PEER = Context.key("switchboard.peer");

    private final TokenVerifier verifier;
    /** Null: plain text. */
    private final TlsSettings tls;

    StreamCallers(TokenVerifier verifier, TlsSettings tls) {
        this.verifier = verifier;
        this.tls = tls;
    }

    @Override
    public <Q, A> ServerCall.Listener<Q> interceptCall(ServerCall<Q, A> call, Metadata headers,
                                                      ServerCallHandler<Q, A> next) {
        SSLSession session = call.getAttributes().get(Grpc.TRANSPORT_ATTR_SSL_SESSION);
        CallerIdentity caller = CallerIdentity.of(CallerIdentity.tlsPeer(session,
                        call.getAttributes().get(Grpc.TRANSPORT_ATTR_REMOTE_ADDR)),
                CallerIdentity.bearer(headers.get(WatchStreamMethod.AUTHORIZATION)), verifier)
                .unlessNoLongerTrusted(tls, session);
        PermissionDeniedException refusal = caller.refusal();
        if (refusal != null) {
            call.close(Status.UNAUTHENTICATED.withDescription(refusal.getMessage()), new Metadata());
            return new ServerCall.Listener<>() {
            };
        }
        return Contexts.interceptCall(Context.current().withValue(PEER, caller.peer()), call, headers, next);
    }

    /** The caller of the gRPC call the current thread serves; {@link Peer#UNKNOWN} outside of one. */
    static Peer peer() {
        Peer p = PEER.get();
        return p == null ? Peer.UNKNOWN : p;
    }

    /** A call context for the registry's own code, made by the caller of the current gRPC call. */
    static ServerCallContext context() {
        return ServerCallContext.create(null, null, peer());
    }
}
