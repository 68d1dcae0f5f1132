package io.switchboard.testing.conformance;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.switchboard.protocol.CallOptions;
import io.switchboard.protocol.ClientSettings;
import io.switchboard.protocol.Endpoint;
import io.switchboard.protocol.Peer;
import io.switchboard.protocol.PermissionDeniedException;
import io.switchboard.protocol.ServerCallContext;
import io.switchboard.protocol.ServerInterceptor;
import io.switchboard.protocol.ServerInterceptorChain;
import io.switchboard.protocol.ServerSettings;
import io.switchboard.protocol.TransportException;
import io.switchboard.protocol.spi.ProtocolClient;
import io.switchboard.protocol.spi.ProtocolProvider;
import io.switchboard.protocol.spi.ProtocolServer;
import io.switchboard.protocol.spi.Protocols;
import io.switchboard.protocol.spi.Transport;
import io.switchboard.testing.TestCertificates;
import io.switchboard.testing.TestTokens;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;

/**
 * Identity x authorization, as every protocol must apply it: with the authorization step in the
 * exported chain and a policy that allows principal A and not B, A's call runs and B's is a
 * {@link PermissionDeniedException} (not delivered) that runs nothing, for each identity source
 * the protocol has: a client certificate, a verified JWT, and none (anonymous: denied by a policy
 * that names only A, allowed by a rule without {@code source}). A protocol whose plain caller
 * has an identity of its own (the Unix socket's uid, the local protocol's caller) says so in
 * {@link #plainPrincipal()}, and that identity is then decided as A and B are.
 *
 * <p>The policy lives above the protocols, so a subclass supplies the authorization step:
 *
 * <pre>{@code
 * class GrpcAuthorizationTest extends AbstractAuthorizationConformanceTest {
 *     protected String protocolName() { return "grpc"; }
 *     protected ServerInterceptor allowOnly(String principal) {
 *         return step(new AuthorizationPolicy.Rule("only", List.of(principal), List.of()));
 *     }
 *     protected ServerInterceptor allowAnyone() {
 *         return step(new AuthorizationPolicy.Rule("anyone", List.of(), List.of()));
 *     }
 *     private static ServerInterceptor step(AuthorizationPolicy.Rule allow) {
 *         return new AuthorizationInterceptor(AuthorizationPolicy.of("matrix", List.of(), List.of(allow)),
 *                 CallPaths.COMPONENT, AuthorizationInterceptor.Denials.NONE);
 *     }
 * }
 * }</pre>
 */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
public abstract class AbstractAuthorizationConformanceTest {
    /** The principal of the token the policy allows. */
    protected static final String TOKEN_A = "alice";
    /** The principal of the token the policy does not allow. */
    protected static final String TOKEN_B = "mallory";

    protected final TestTokens tokens = TestTokens.get();
    private final List<AutoCloseable> open = new ArrayList<>();
    private final Recorder operation = new Recorder();
    /** The authorization step in force: swapped per case, so that the servers start once per class. */
    private final AtomicReference<ServerInterceptor> authorization = new AtomicReference<>();
    private ProtocolProvider provider;
    private Endpoint plain;
    private Endpoint mutual;

    /** The protocol's key, as its provider names it. */
    protected abstract String protocolName();

    /** The authorization step for a policy whose one allow rule names only {@code principal}. */
    protected abstract ServerInterceptor allowOnly(String principal);

    /** The authorization step for a policy with an allow rule without {@code source}: anyone, anonymous too. */
    protected abstract ServerInterceptor allowAnyone();

    /** The endpoint the client connects to, given the one the server returned. */
    protected Endpoint connectTo(Endpoint served) {
        return served;
    }

    /** Whether the protocol serves TLS and bearer tokens (local, in the same process, does neither). */
    protected boolean remote() {
        return true;
    }

    /** The principal a call without credentials proves (the Unix socket's uid, say); null: anonymous. */
    protected String plainPrincipal() {
        return null;
    }

    /** Options every call of a case adds (the local protocol's caller name); none by default. */
    protected CallOptions options() {
        return CallOptions.DEFAULT;
    }

    @BeforeAll
    void startServers() {
        provider = Protocols.get(protocolName());
        plain = serve(ServerSettings.defaults().withTokenVerifier(tokens.verifier()));
        if (remote()) {
            mutual = serve(ServerSettings.defaults().withTls(TestCertificates.get().serverMutual())
                    .withTokenVerifier(tokens.verifier()));
        }
    }

    @AfterAll
    void stopServers() throws Exception {
        for (int i = open.size() - 1; i >= 0; i--) {
            open.get(i).close();
        }
    }

    @BeforeEach
    void noPolicyYet() {
        authorization.set(null);
    }

    @Test
    void aCertificateThePolicyNamesIsAllowedAndAnotherIsDenied() {
        if (!remote()) {
            return;
        }
        policy(allowOnly(TestCertificates.SPIFFE_ID));
        assertAllowed(mutual, ClientSettings.defaults().withTls(TestCertificates.get().spiffeClient()),
                TestCertificates.SPIFFE_ID);
        assertDenied(mutual, ClientSettings.defaults().withTls(TestCertificates.get().dnsClient()), "certificate B");

        policy(allowOnly(TestCertificates.DNS_CLIENT));
        assertAllowed(mutual, ClientSettings.defaults().withTls(TestCertificates.get().dnsClient()),
                TestCertificates.DNS_CLIENT);
        assertDenied(mutual, ClientSettings.defaults().withTls(TestCertificates.get().spiffeClient()), "certificate A");
    }

    @Test
    void aTokenThePolicyNamesIsAllowedAndAnotherIsDenied() {
        if (!remote()) {
            return;
        }
        policy(allowOnly(TOKEN_A));
        assertAllowed(plain, withToken(TOKEN_A), TOKEN_A);
        assertDenied(plain, withToken(TOKEN_B), "token B");
    }

    @Test
    void aTokenDecidesOverTheCertificateItTravelsWith() {
        if (!remote()) {
            return;
        }
        // the certificate alone would be allowed; the verified token is who calls
        policy(allowOnly(TestCertificates.SPIFFE_ID));
        assertDenied(mutual, ClientSettings.defaults().withTls(TestCertificates.get().spiffeClient())
                .withToken(() -> tokens.valid(TOKEN_B)), "token B over certificate A");
        policy(allowOnly(TOKEN_A));
        assertAllowed(mutual, ClientSettings.defaults().withTls(TestCertificates.get().dnsClient())
                .withToken(() -> tokens.valid(TOKEN_A)), TOKEN_A);
    }

    @Test
    void aPlainCallIsDecidedByWhatItsTransportProves() {
        String own = plainPrincipal();
        if (own == null) {
            policy(allowOnly(TOKEN_A));
            assertDenied(plain, ClientSettings.defaults(), "anonymous under a policy naming only A");
        } else {
            policy(allowOnly(own));
            assertAllowed(plain, ClientSettings.defaults(), own);
            policy(allowOnly(own + "-other"));
            assertDenied(plain, ClientSettings.defaults(), own + " under a policy naming another");
        }
        policy(allowAnyone());
        Peer peer = assertAllowed(plain, ClientSettings.defaults(), own);
        assertEquals(own == null, !peer.authenticated(), peer.toString());
    }

    @Test
    void withoutAPolicyInTheChainEveryCallerRuns() {
        assertAllowed(plain, ClientSettings.defaults(), plainPrincipal());
        if (remote()) {
            assertAllowed(plain, withToken(TOKEN_B), TOKEN_B);
        }
    }

    /** Puts {@code step} in the exported chain; the next call meets it. */
    protected void policy(ServerInterceptor step) {
        authorization.set(step);
    }

    protected ClientSettings withToken(String subject) {
        return ClientSettings.defaults().withToken(() -> tokens.valid(subject));
    }

    /** The plain-text server's endpoint, which verifies tokens. */
    protected Endpoint plainEndpoint() {
        return plain;
    }

    /**
     * A call to {@code at} with {@code settings} runs, and its operation saw {@code principal}
     * (null: anonymous); returns the peer it saw.
     */
    protected Peer assertAllowed(Endpoint at, ClientSettings settings, String principal) {
        int before = operation.runs.get();
        operation.seen.set(null);
        try (Client c = new Client(at, settings)) {
            c.ping();
        }
        Peer seen = operation.seen.get();
        assertNotNull(seen, "the operation did not run");
        assertEquals(before + 1, operation.runs.get());
        assertEquals(principal, seen.principal(), seen.toString());
        return seen;
    }

    /** A call to {@code at} with {@code settings} is denied by the policy, not delivered, and runs nothing. */
    protected PermissionDeniedException assertDenied(Endpoint at, ClientSettings settings, String what) {
        int before = operation.runs.get();
        PermissionDeniedException e;
        try (Client c = new Client(at, settings)) {
            e = assertThrows(PermissionDeniedException.class, c::ping, what);
        }
        assertEquals(PermissionDeniedException.DENIED, e.reason(), what + ": " + e);
        assertTrue(String.valueOf(e.path()).endsWith("/ping"), what + ": " + e.path());
        assertEquals(TransportException.Delivery.NOT_DELIVERED, e.delivery(), what);
        assertEquals(before, operation.runs.get(), what + ": the operation ran");
        return e;
    }

    private Endpoint serve(ServerSettings settings) {
        ProtocolServer server = provider.newServer(settings);
        open.add(server);
        ServerInterceptor current = (call, next) -> {
            ServerInterceptor step = authorization.get();
            return step == null ? next.proceed(call) : step.intercept(call, next);
        };
        return server.export(ServerInterceptorChain.of(null, protocolName(), List.of(current),
                ConformanceComponent.skeleton(operation)));
    }

    /** A client of its own, so that each case's settings (key, token) stand alone. */
    private final class Client implements AutoCloseable {
        private final ProtocolClient client;
        private final Transport transport;

        Client(Endpoint at, ClientSettings settings) {
            client = provider.newClient(settings);
            transport = client.connect(ConformanceComponent.DESCRIPTOR, connectTo(at));
        }

        void ping() {
            ConformanceComponent.stub(transport).withOptions(options()).ping();
        }

        @Override
        public void close() {
            transport.close();
            client.close();
        }
    }

    /** The conformance component, its {@code ping} noting who called it. */
    private static final class Recorder extends ConformanceImpl {
        final AtomicReference<Peer> seen = new AtomicReference<>();
        final AtomicInteger runs = new AtomicInteger();

        @Override
        public void ping() {
            runs.incrementAndGet();
            seen.set(ServerCallContext.peer());
        }
    }
}
