package io.switchboard.server;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import io.switchboard.idl.runtime.OperationDescriptor;
import io.switchboard.protocol.Peer;
import io.switchboard.protocol.PermissionDeniedException;
import io.switchboard.protocol.ServerCallContext;
import io.switchboard.protocol.ServerInterceptor;
import io.switchboard.protocol.ServerInterceptorChain;
import io.switchboard.protocol.Skeleton;
import io.switchboard.protocol.spi.DeduplicatingInterceptor;
import io.switchboard.server.authz.AuthorizationInterceptor;
import io.switchboard.server.authz.AuthorizationPolicy;
import io.switchboard.server.authz.CallPaths;
import io.switchboard.testing.conformance.ConformanceComponent;
import io.switchboard.testing.conformance.ConformanceImpl;
import io.switchboard.testing.conformance.Increment;
import java.time.Duration;
import java.util.List;
import org.junit.jupiter.api.Test;

/**
 * The authorization step in the server chain, with peers the test sets as a protocol would:
 * it decides by principal, and it sits before the de-duplicator, so a denied caller reusing
 * another's call id learns nothing of that call's outcome.
 */
class AuthorizationChainTest {
    private static final OperationDescriptor INCREMENT = ConformanceComponent.DESCRIPTOR.operation("increment");
    private static final Peer ALICE = Peer.of("spiffe://example.org/team-a/alice", Peer.Authentication.MUTUAL_TLS, "10.0.0.1:4000");
    private static final Peer MALLORY = Peer.of("spiffe://example.org/team-b/mallory", Peer.Authentication.TOKEN, "10.0.0.2:4000");

    private static Object as(Peer peer, Skeleton skeleton, String callId) throws Exception {
        try (ServerCallContext.Scope scope = ServerCallContext.create(null, null, peer).enter()) {
            Increment by = new Increment();
            by.setBy(5);
            return skeleton.invoke(INCREMENT, by, callId);
        }
    }

    @Test
    void aDeniedCallerReusingACallIdGetsADenialNotTheFirstOutcome() throws Exception {
        AuthorizationPolicy teamA = AuthorizationPolicy.parse("""
                {"name": "team-a", "allow_rules": [{"name": "team-a",
                  "source": {"principals": ["spiffe://example.org/team-a/*"]}}]}""");
        ServerCallStats stats = new ServerCallStats(new SimpleMeterRegistry());
        AuthorizationInterceptor authz = new AuthorizationInterceptor(teamA, CallPaths.COMPONENT,
                (call, protocol, peer, path) -> stats.denied(peer.identity(), path, protocol));
        List<ServerInterceptor> steps = ComponentServer.chain(null, authz, stats,
                new DeduplicatingInterceptor(1 << 20, Duration.ofMinutes(1)), new DrainingInterceptor(), List.of());
        ConformanceImpl impl = new ConformanceImpl();
        Skeleton soap = ServerInterceptorChain.of("Counter", "soap", steps, ConformanceComponent.skeleton(impl));

        Object first = as(ALICE, soap, "call-x");
        PermissionDeniedException e = assertThrows(PermissionDeniedException.class, () -> as(MALLORY, soap, "call-x"));
        String path = CallPaths.of(ConformanceComponent.DESCRIPTOR.name(), "increment");
        assertEquals(path, e.path());
        assertEquals(first, as(ALICE, soap, "call-x"), "alice's own repeat still gets her outcome");
        assertEquals(1, impl.increments.get());
        assertThrows(PermissionDeniedException.class, () -> as(Peer.UNKNOWN, soap, "call-y"));
        assertEquals(List.of(new ServerCallStats.Denial("ANONYMOUS", path, 1),
                new ServerCallStats.Denial("TOKEN:spiffe://example.org/team-b/mallory", path, 1)), stats.denials());
    }
}
