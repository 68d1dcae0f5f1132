package io.switchboard.testing.conformance;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.switchboard.protocol.ClientSettings;
import io.switchboard.protocol.Endpoint;
import io.switchboard.protocol.PermissionDeniedException;
import io.switchboard.protocol.ServerSettings;
import io.switchboard.protocol.TlsSettings;
import io.switchboard.protocol.TransportException;
import io.switchboard.protocol.spi.ProtocolClient;
import io.switchboard.protocol.spi.ProtocolProvider;
import io.switchboard.protocol.spi.ProtocolServer;
import io.switchboard.protocol.spi.Protocols;
import io.switchboard.testing.CountingSkeleton;
import io.switchboard.testing.TestCertificates;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;
import org.junit.jupiter.api.io.TempDir;

/**
 * What every network protocol does with TLS and client certificates, on a real server and real
 * sockets: a server whose settings hold a trust store serves only callers that present a
 * certificate it trusts; plain text, a TLS caller without a key and one with an untrusted key are
 * refused before anything runs (the counting skeleton stays still) and the refusal is counted;
 * with a revocation list, a server refuses the callers it revokes and a client the servers; a
 * server's key and trust stores replaced take effect at the next handshake.
 * A protocol's test extends it and says how its endpoint looks in plain text.
 */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
public abstract class AbstractMutualTlsTest {
    private final Map<String, AtomicInteger> served = new ConcurrentHashMap<>();
    private TestCertificates certs;
    private ProtocolProvider provider;
    private ProtocolServer server;
    private Endpoint endpoint;

    /** The protocol under test, by name. */
    protected abstract String protocolName();

    /** The same endpoint as a plain-text client would name it ({@code http://}, {@code grpc://}). */
    protected abstract Endpoint plainTextForm(Endpoint tlsEndpoint);

    @BeforeAll
    void start() {
        certs = TestCertificates.get();
        provider = Protocols.get(protocolName());
        server = provider.newServer(ServerSettings.defaults().withTls(certs.serverMutual()));
        endpoint = server.export(new CountingSkeleton(ConformanceComponent.skeleton(new ConformanceImpl()), "runs",
                served, label -> { }));
    }

    @AfterAll
    void stop() {
        if (server != null) {
            server.close();
        }
    }

    private int runs() {
        AtomicInteger n = served.get("runs");
        return n == null ? 0 : n.get();
    }

    /** The conformance component on {@code server}, counting its calls under "runs" in {@code count}. */
    private static Endpoint exportCounting(ProtocolServer server, Map<String, AtomicInteger> count) {
        return server.export(new CountingSkeleton(ConformanceComponent.skeleton(new ConformanceImpl()), "runs",
                count, label -> { }));
    }

    /**
     * Whether a client of this protocol resumes its TLS sessions, whose handshakes show the
     * server no certificate: the server then checks the chain after the handshake and answers the
     * calls of a client no longer trusted as refused and unauthenticated (they did not run).
     * Otherwise (gRPC's TLS) the full handshake fails, and the caller learns of it as a failed
     * connection.
     */
    protected boolean resumesSessions() {
        return true;
    }

    /** A call of {@code caller}, whose earlier session the server may see resumed, is refused. */
    private void assertRefusedOnItsResumedSession(TlsSettings caller, Endpoint at, String who) {
        if (resumesSessions()) {
            PermissionDeniedException e = assertThrows(PermissionDeniedException.class, () -> ping(caller, at), who);
            assertTrue(e.unauthenticated(), e.reason() + ": " + e.getMessage());
            assertTrue(e.getMessage().contains("did not run"), e.getMessage());
        } else {
            assertThrows(TransportException.class, () -> ping(caller, at), who);
        }
    }

    private void ping(TlsSettings clientTls, Endpoint at) {
        try (ProtocolClient client = provider.newClient(ClientSettings.defaults().withTls(clientTls))) {
            ConformanceComponent.stub(client.connect(ConformanceComponent.DESCRIPTOR, at)).ping();
        }
    }

    @Test
    void aTrustedCallerGetsThroughOnAProtectedEndpoint() {
        assertTrue(provider.protectedEndpoint(endpoint), endpoint + " says TLS");
        assertEquals(null, provider.checkAddress(endpoint.address()), "a registry entry may carry " + endpoint);
        int before = runs();
        ping(certs.client(), endpoint);
        assertEquals(before + 1, runs());
    }

    @Test
    void callersWithoutATrustedCertificateAreRefusedBeforeAnythingRuns() throws InterruptedException {
        ping(certs.client(), endpoint);   // the server is up and its connections warm
        int before = runs();
        long refused = server.refusedConnections();

        Endpoint plain = plainTextForm(endpoint);
        assertTrue(!provider.protectedEndpoint(plain), plain + " is plain text");
        assertThrows(TransportException.class, () -> ping(null, plain), "plain text");
        // refused at the handshake: the client is told its call was not delivered, so it may go elsewhere
        java.util.Map<String, TlsSettings> refusedAtHandshake = java.util.Map.of("TLS without a key",
                certs.clientWithoutKey(), "an untrusted key", certs.rogueClient());
        refusedAtHandshake.forEach((what, tls) -> {
            TransportException e = assertThrows(TransportException.class, () -> ping(tls, endpoint), what);
            assertEquals(TransportException.Delivery.NOT_DELIVERED, e.delivery(), what + ": " + e.getMessage());
        });

        assertEquals(before, runs(), "no refused call ran");
        long end = System.nanoTime() + 10_000_000_000L;   // the server counts as each connection closes
        while (server.refusedConnections() < refused + 3 && System.nanoTime() < end) {
            Thread.sleep(20);
        }
        assertTrue(server.refusedConnections() >= refused + 3,
                "refusals counted: " + (server.refusedConnections() - refused));
        ping(certs.client(), endpoint);
        assertEquals(before + 1, runs(), "trusted callers still get through");
    }

    @Test
    void aServerWithARevocationListRefusesTheCallersItRevokesAndTakesTheOthers(@TempDir Path dir) {
        Path crl = certs.revocationList(dir, certs.clientKeyStore());
        try (ProtocolServer guarded = provider.newServer(ServerSettings.defaults()
                .withTls(certs.serverMutual().withRevocationList(crl)))) {
            Map<String, AtomicInteger> count = new ConcurrentHashMap<>();
            Endpoint at = exportCounting(guarded, count);
            TransportException e = assertThrows(TransportException.class, () -> ping(certs.client(), at),
                    "a revoked certificate");
            assertEquals(TransportException.Delivery.NOT_DELIVERED, e.delivery(), e.getMessage());
            assertEquals(null, count.get("runs"), "the revoked caller's call ran");
            ping(certs.spiffeClient(), at);   // another certificate of the same authority
            assertEquals(1, count.get("runs").get());
        }
    }

    /**
     * A revocation list renewed while a caller holds a TLS session: the caller's next connection
     * is refused, though it may resume that session, whose handshake shows no certificate.
     */
    @Test
    void aCallerRevokedSinceItsSessionBeganIsRefusedAtItsNextConnection(@TempDir Path dir) {
        TestCertificates.RevocationFile crl = certs.revocationFile(dir);
        try (ProtocolServer guarded = provider.newServer(ServerSettings.defaults()
                .withTls(certs.serverMutual().withRevocationList(crl.path())))) {
            Map<String, AtomicInteger> count = new ConcurrentHashMap<>();
            Endpoint at = exportCounting(guarded, count);
            TlsSettings caller = certs.client();   // one client's TLS throughout: it may resume its sessions
            ping(caller, at);
            crl.revoke(certs.clientKeyStore());
            assertRefusedOnItsResumedSession(caller, at, "a caller revoked since its session began");
            assertEquals(1, count.get("runs").get(), "the revoked caller's call ran");
        }
    }

    /**
     * A revocation list renewed while a caller's connection stays open: its next calls on that
     * connection are refused as unauthenticated and do not run (the list is looked at at most
     * every 100 ms on the way of a call, so a call or two may still pass meanwhile).
     */
    @Test
    void aCallerRevokedWhileItsConnectionIsOpenIsRefusedAtItsNextCalls(@TempDir Path dir) {
        TestCertificates.RevocationFile crl = certs.revocationFile(dir);
        try (ProtocolServer guarded = provider.newServer(ServerSettings.defaults()
                .withTls(certs.serverMutual().withRevocationList(crl.path())));
             ProtocolClient client = provider.newClient(ClientSettings.defaults().withTls(certs.client()))) {
            Map<String, AtomicInteger> count = new ConcurrentHashMap<>();
            Endpoint at = exportCounting(guarded, count);
            Conformance stub = ConformanceComponent.stub(client.connect(ConformanceComponent.DESCRIPTOR, at));
            stub.ping();
            crl.revoke(certs.clientKeyStore());
            long end = System.nanoTime() + 30_000_000_000L;
            PermissionDeniedException refused = null;
            while (refused == null) {   // a TransportException here: the connection was not kept, the test judges nothing
                try {
                    stub.ping();
                } catch (PermissionDeniedException e) {
                    refused = e;
                }
                assertTrue(System.nanoTime() < end, "calls on the revoked caller's open connection still ran");
            }
            assertEquals(PermissionDeniedException.UNAUTHENTICATED, refused.reason(), refused.getMessage());
            int ran = count.get("runs").get();
            assertThrows(PermissionDeniedException.class, stub::ping);
            assertEquals(ran, count.get("runs").get(), "a refused call ran");
        }
    }

    @Test
    void anOperationRunningWhenItsCallerIsRevokedSeesItNoLongerTrusted(@TempDir Path dir)
            throws Exception {
        TestCertificates.RevocationFile crl = certs.revocationFile(dir);
        java.util.concurrent.CountDownLatch running = new java.util.concurrent.CountDownLatch(1);
        java.util.concurrent.CountDownLatch revoked = new java.util.concurrent.CountDownLatch(1);
        java.util.concurrent.CountDownLatch judged = new java.util.concurrent.CountDownLatch(1);
        java.util.List<Boolean> seen = new java.util.concurrent.CopyOnWriteArrayList<>();
        // runs inside the call, as a long poll waits: what the operation sees of its caller before and after
        java.util.function.Consumer<String> waitsForTheRevocation = label -> {
            seen.add(io.switchboard.protocol.ServerCallContext.callerStillTrusted());
            running.countDown();
            try {
                assertTrue(revoked.await(30, java.util.concurrent.TimeUnit.SECONDS));
                long end = System.nanoTime() + 10_000_000_000L;   // the lists are looked at at most every 100 ms
                while (io.switchboard.protocol.ServerCallContext.callerStillTrusted() && System.nanoTime() < end) {
                    Thread.sleep(20);
                }
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
            seen.add(io.switchboard.protocol.ServerCallContext.callerStillTrusted());
            judged.countDown();
        };
        try (ProtocolServer guarded = provider.newServer(ServerSettings.defaults()
                .withTls(certs.serverMutual().withRevocationList(crl.path())));
             ProtocolClient client = provider.newClient(ClientSettings.defaults().withTls(certs.client()))) {
            Endpoint at = guarded.export(new CountingSkeleton(ConformanceComponent.skeleton(new ConformanceImpl()),
                    "runs", new ConcurrentHashMap<>(), waitsForTheRevocation));
            Conformance stub = ConformanceComponent.stub(client.connect(ConformanceComponent.DESCRIPTOR, at));
            java.util.concurrent.CompletableFuture<Void> call = java.util.concurrent.CompletableFuture.runAsync(stub::ping);
            assertTrue(running.await(30, java.util.concurrent.TimeUnit.SECONDS), "the call never ran");
            crl.revoke(certs.clientKeyStore());
            revoked.countDown();
            assertTrue(judged.await(30, java.util.concurrent.TimeUnit.SECONDS), "the operation never looked again");
            assertEquals(java.util.List.of(true, false), seen,
                    "trusted when it began, and no longer once its certificate was revoked");
            call.get(30, java.util.concurrent.TimeUnit.SECONDS);   // what the operation does with it is its own
        }
    }

    @Test
    void aClientWithARevocationListRefusesAServerItRevokes(@TempDir Path dir) {
        int before = runs();
        TlsSettings revokesTheServer = certs.client().withRevocationList(certs.revocationList(dir, certs.serverKeyStore()));
        TransportException e = assertThrows(TransportException.class, () -> ping(revokesTheServer, endpoint),
                "a server whose certificate is revoked");
        assertEquals(TransportException.Delivery.NOT_DELIVERED, e.delivery(), e.getMessage());
        assertEquals(before, runs(), "a call reached the revoked server");
        ping(certs.client().withRevocationList(certs.revocationList(dir)), endpoint);   // a list that revokes nothing
        assertEquals(before + 1, runs());
    }

    /**
     * A server's key store replaced (a renewed certificate) is presented at the next handshake,
     * with no restart: a client of the test authority refuses the rogue key the server starts with,
     * and is served once the file holds the authority's key.
     */
    @Test
    void aServerPresentsItsReplacedKeyStoreAtTheNextHandshake(@TempDir Path dir) throws Exception {
        Path key = Files.copy(certs.rogueKeyStore(), dir.resolve("server.p12"));
        try (ProtocolServer renewing = provider.newServer(ServerSettings.defaults()
                .withTls(TlsSettings.keyStore(key, TestCertificates.PASSWORD)))) {
            Map<String, AtomicInteger> count = new ConcurrentHashMap<>();
            Endpoint at = exportCounting(renewing, count);
            TransportException e = assertThrows(TransportException.class, () -> ping(certs.clientWithoutKey(), at),
                    "a server certificate no authority of the client's signed");
            assertEquals(TransportException.Delivery.NOT_DELIVERED, e.delivery(), e.getMessage());
            TestCertificates.replaceFile(key, certs.serverKeyStore());
            ping(certs.clientWithoutKey(), at);
            assertEquals(1, count.get("runs").get());
        }
    }

    /**
     * A server's trust store replaced takes effect at the next handshake: an authority added admits
     * its callers, withdrawn it refuses them before anything runs (a client that could resume its
     * earlier session among them), and restored it admits them again.
     */
    @Test
    void aServerChecksCallersByItsReplacedTrustStoreAtTheNextHandshake(@TempDir Path dir) throws Exception {
        Path trust = Files.copy(certs.trustStoreOf(dir, certs.rogueKeyStore()), dir.resolve("trust.p12"));
        try (ProtocolServer guarded = provider.newServer(ServerSettings.defaults()
                .withTls(TlsSettings.of(certs.serverKeyStore(), trust, TestCertificates.PASSWORD)))) {
            Map<String, AtomicInteger> count = new ConcurrentHashMap<>();
            Endpoint at = exportCounting(guarded, count);
            TlsSettings caller = certs.client();   // one client's TLS throughout: it may resume its sessions
            TransportException e = assertThrows(TransportException.class, () -> ping(caller, at),
                    "a caller of an authority the server does not trust yet");
            assertEquals(TransportException.Delivery.NOT_DELIVERED, e.delivery(), e.getMessage());
            assertEquals(null, count.get("runs"));

            TestCertificates.replaceFile(trust, certs.trustStore());
            ping(caller, at);
            assertEquals(1, count.get("runs").get());

            TestCertificates.replaceFile(trust, certs.trustStoreOf(dir, certs.rogueKeyStore()));
            // refused, and nothing runs
            assertRefusedOnItsResumedSession(caller, at, "a caller of a withdrawn authority");
            assertEquals(1, count.get("runs").get(), "a refused caller's call ran");

            TestCertificates.replaceFile(trust, certs.trustStore());
            ping(caller, at);
            assertEquals(2, count.get("runs").get());
        }
    }

    @Test
    void aPlainTextServerCountsNoRefusals() throws InterruptedException {
        try (ProtocolServer plain = provider.newServer(ServerSettings.defaults())) {
            Endpoint at = plain.export(ConformanceComponent.skeleton(new ConformanceImpl()));
            assertTrue(!provider.protectedEndpoint(at), at + " is plain text");
            ping(null, at);   // the client closes its connection: an ordinary end, not a refusal
            Thread.sleep(300);
            assertEquals(0, plain.refusedConnections());
        }
    }

    @Test
    void withoutATrustStoreTheServerTakesTlsCallersWithoutKeys() {
        try (ProtocolServer open = provider.newServer(ServerSettings.defaults().withTls(certs.server()))) {
            Map<String, AtomicInteger> count = new ConcurrentHashMap<>();
            Endpoint at = exportCounting(open, count);
            assertTrue(provider.protectedEndpoint(at), at + " says TLS");
            ping(certs.clientWithoutKey(), at);
            assertThrows(TransportException.class, () -> ping(null, plainTextForm(at)), "plain text");
            assertEquals(1, count.get("runs").get());
        }
    }
}
