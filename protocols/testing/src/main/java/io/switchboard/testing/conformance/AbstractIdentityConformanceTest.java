package io.switchboard.testing.conformance;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.switchboard.protocol.ClientSettings;
import io.switchboard.protocol.Endpoint;
import io.switchboard.protocol.Peer;
import io.switchboard.protocol.ServerCallContext;
import io.switchboard.protocol.ServerSettings;
import io.switchboard.protocol.SwitchboardException;
import io.switchboard.protocol.spi.ProtocolClient;
import io.switchboard.protocol.spi.ProtocolProvider;
import io.switchboard.protocol.spi.ProtocolServer;
import io.switchboard.protocol.spi.Protocols;
import io.switchboard.protocol.spi.Transport;
import io.switchboard.testing.TestCertificates;
import io.switchboard.testing.TestTokens;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;

/**
 * Who made a call, as every protocol must tell its operation ({@link ServerCallContext#peer()}):
 * a client certificate's principal (URI SAN, else DNS SAN, else subject), a verified bearer token
 * (which wins over the certificate), nothing (anonymous, with the remote address); and every
 * hostile token refused before the operation runs, never downgraded to the transport's peer. A
 * protocol module extends this class and names its protocol.
 *
 * <pre>{@code
 * class GrpcIdentityTest extends AbstractIdentityConformanceTest {
 *     protected String protocolName() { return "grpc"; }
 * }
 * }</pre>
 */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
public abstract class AbstractIdentityConformanceTest {
    protected final TestTokens tokens = TestTokens.get();
    private final List<AutoCloseable> open = new ArrayList<>();
    private final PeerRecorder operation = new PeerRecorder();
    private ProtocolProvider provider;
    /** A plain-text server that verifies tokens. */
    private Endpoint plain;
    /** A mutual-TLS server that verifies tokens; null for a protocol without TLS. */
    private Endpoint mutual;

    /** The protocol's key, as its provider names it. */
    protected abstract String protocolName();

    protected ProtocolProvider provider() {
        return Protocols.get(protocolName());
    }

    /** The endpoint the client connects to, given the one the server returned (tcp: with or without its Unix socket). */
    protected Endpoint connectTo(Endpoint served) {
        return served;
    }

    /** Whether the protocol serves TLS and bearer tokens (local, in the same process, does neither). */
    protected boolean remote() {
        return true;
    }

    /** What a plain call without a token proves: nothing, and where it came from. */
    protected void assertPlainPeer(Peer peer) {
        assertEquals(Peer.Authentication.ANONYMOUS, peer.authentication(), peer.toString());
        assertNotNull(peer.remoteAddress(), "the remote address of " + peer);
        assertTrue(peer.remoteAddress().startsWith("127.0.0.1:"), peer.remoteAddress());
    }

    @BeforeAll
    void startServers() {
        provider = provider();
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

    @Test
    void aCallWithoutCredentialsHasTheTransportsPeer() {
        assertPlainPeer(peerOf(plain, ClientSettings.defaults()));
    }

    @Test
    void aVerifiedTokenNamesTheCaller() {
        if (!remote()) {
            return;
        }
        Peer peer = peerOf(plain, ClientSettings.defaults().withToken(() -> tokens.valid("alice")));
        assertEquals("alice", peer.principal());
        assertEquals(Peer.Authentication.TOKEN, peer.authentication());
    }

    @Test
    void theTokenIsAskedForOnEveryCall() {
        if (!remote()) {
            return;
        }
        AtomicInteger asked = new AtomicInteger();
        ClientSettings rotating = ClientSettings.defaults().withToken(() -> tokens.valid("key-" + asked.incrementAndGet()));
        try (Client c = new Client(plain, rotating)) {
            assertEquals("key-1", c.peer().principal());
            assertEquals("key-2", c.peer().principal());
        }
    }

    @Test
    void everyHostileTokenIsRefusedAndTheOperationDoesNotRun() {
        if (!remote()) {
            return;
        }
        for (Map.Entry<String, String> hostile : hostileTokens().entrySet()) {
            assertRefused(plain, ClientSettings.defaults().withToken(hostile::getValue), hostile.getKey());
        }
    }

    @Test
    void theSubjectOfACertificateWithoutSansNamesTheCaller() {
        if (!remote()) {
            return;
        }
        Peer peer = peerOf(mutual, ClientSettings.defaults().withTls(TestCertificates.get().client()));
        assertEquals(Peer.of(TestCertificates.CLIENT_SUBJECT, Peer.Authentication.MUTUAL_TLS, peer.remoteAddress()), peer);
        assertTrue(peer.remoteAddress().startsWith("127.0.0.1:"), peer.remoteAddress());
    }

    @Test
    void aUriSanNamesTheCallerBeforeItsDnsSan() {
        if (!remote()) {
            return;
        }
        Peer peer = peerOf(mutual, ClientSettings.defaults().withTls(TestCertificates.get().spiffeClient()));
        assertEquals(TestCertificates.SPIFFE_ID, peer.principal());
        assertEquals(Peer.Authentication.MUTUAL_TLS, peer.authentication());
    }

    @Test
    void aDnsSanNamesTheCallerBeforeItsSubject() {
        if (!remote()) {
            return;
        }
        Peer peer = peerOf(mutual, ClientSettings.defaults().withTls(TestCertificates.get().dnsClient()));
        assertEquals(TestCertificates.DNS_CLIENT, peer.principal());
        assertEquals(Peer.Authentication.MUTUAL_TLS, peer.authentication());
    }

    @Test
    void aVerifiedTokenWinsOverTheCertificate() {
        if (!remote()) {
            return;
        }
        Peer peer = peerOf(mutual, ClientSettings.defaults().withTls(TestCertificates.get().spiffeClient())
                .withToken(() -> tokens.valid("bob")));
        assertEquals("bob", peer.principal());
        assertEquals(Peer.Authentication.TOKEN, peer.authentication());
    }

    @Test
    void aHostileTokenBesideAGoodCertificateIsRefusedNotDowngraded() {
        if (!remote()) {
            return;
        }
        for (Map.Entry<String, String> hostile : hostileTokens().entrySet()) {
            assertRefused(mutual, ClientSettings.defaults().withTls(TestCertificates.get().spiffeClient())
                    .withToken(hostile::getValue), hostile.getKey());
        }
    }

    /** The test issuer's hostile tokens, and a value that is no bearer token at all. */
    private Map<String, String> hostileTokens() {
        Map<String, String> hostile = new LinkedHashMap<>(tokens.hostile("mallory"));
        hostile.put("two words", "not one");
        return hostile;
    }

    /**
     * The call is refused before the operation runs. Until the refusal has a wire form of its own
     * on every protocol, its message is what shows the reason.
     */
    private void assertRefused(Endpoint at, ClientSettings settings, String what) {
        int before = operation.runs.get();
        try (Client c = new Client(at, settings)) {
            SwitchboardException e = assertThrows(SwitchboardException.class, c::peer, what);
            assertTrue(String.valueOf(e.getMessage()).contains("bearer token"), what + ": " + e);
        }
        assertEquals(before, operation.runs.get(), what + ": the operation ran");
    }

    /** The peer the operation saw on one call to {@code at} from a client with {@code settings}. */
    protected Peer peerOf(Endpoint at, ClientSettings settings) {
        try (Client c = new Client(at, settings)) {
            return c.peer();
        }
    }

    /** The endpoint of the plain-text server. */
    protected Endpoint plainEndpoint() {
        return plain;
    }

    private Endpoint serve(ServerSettings settings) {
        ProtocolServer server = provider.newServer(settings);
        open.add(server);
        return server.export(ConformanceComponent.skeleton(operation));
    }

    /** A client of its own, so that each case's settings (key, token) stand alone. */
    private final class Client implements AutoCloseable {
        private final ProtocolClient client;
        private final Transport transport;

        Client(Endpoint at, ClientSettings settings) {
            client = provider.newClient(settings);
            transport = client.connect(ConformanceComponent.DESCRIPTOR, connectTo(at));
        }

        Peer peer() {
            operation.seen.set(null);
            ConformanceComponent.stub(transport).ping();
            Peer seen = operation.seen.get();
            assertNotNull(seen, "the operation did not run");
            return seen;
        }

        @Override
        public void close() {
            transport.close();
            client.close();
        }
    }

    /** The conformance component, its {@code ping} noting who called it. */
    private static final class PeerRecorder extends ConformanceImpl {
        final AtomicReference<Peer> seen = new AtomicReference<>();
        final AtomicInteger runs = new AtomicInteger();

        @Override
        public void ping() {
            runs.incrementAndGet();
            seen.set(ServerCallContext.peer());
        }
    }
}
