package io.switchboard.testing.conformance;

import io.switchboard.idl.runtime.DeclaredFault;
import io.switchboard.protocol.Peer;
import io.switchboard.protocol.ServerCall;
import io.switchboard.protocol.ServerCallContext;
import io.switchboard.protocol.ServerInterceptor;
import io.switchboard.protocol.TraceContext;

/**
 * A test's stand-in for authentication, the same on every protocol: a call whose W3C trace state
 * names a caller ({@code sbtest=alice}) runs the steps after this one as made by that caller (a
 * token peer), so the suite can call as two identities over protocols that do not establish one
 * themselves. Calls without it pass as they came. Never for a real server: any caller may claim
 * any name this way.
 *
 * <pre>{@code
 * Conformance alice = stub.withOptions(CallOptions.DEFAULT.with(TraceContext.OPTION, CallerFromTraceState.as("alice")));
 * }</pre>
 */
public final class CallerFromTraceState implements ServerInterceptor {
    private static final String KEY = "sbtest=";
    private static final String PARENT = "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01";

    /** The trace context that makes a call come from {@code caller} (lower-case letters and digits). */
    public static TraceContext as(String caller) {
        return TraceContext.of(PARENT, KEY + caller);
    }

    @Override
    public Object intercept(ServerCall call, Chain next) throws DeclaredFault {
        TraceContext trace = call.trace();
        String state = trace == null ? null : trace.tracestate();
        if (state == null || !state.startsWith(KEY)) {
            return next.proceed(call);
        }
        ServerCallContext outer = ServerCallContext.current();
        Peer peer = Peer.of(state.substring(KEY.length()), Peer.Authentication.TOKEN, call.peer().remoteAddress());
        ServerCallContext claimed = ServerCallContext.create(outer == null ? null : outer.deadlineNanos(), trace, peer);
        try (ServerCallContext.Scope scope = claimed.enter()) {
            return next.proceed(call);
        }
    }
}
