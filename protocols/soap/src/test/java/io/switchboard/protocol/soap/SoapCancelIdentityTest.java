package io.switchboard.protocol.soap;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.switchboard.protocol.CallIds;
import io.switchboard.protocol.CallOptions;
import io.switchboard.protocol.ClientSettings;
import io.switchboard.protocol.Endpoint;
import io.switchboard.protocol.RefusedException;
import io.switchboard.protocol.ServerSettings;
import io.switchboard.protocol.TlsSettings;
import io.switchboard.protocol.spi.ProtocolClient;
import io.switchboard.protocol.spi.ProtocolServer;
import io.switchboard.protocol.spi.Transport;
import io.switchboard.testing.TestCertificates;
import io.switchboard.testing.TestTokens;
import io.switchboard.testing.conformance.ConformanceComponent;
import io.switchboard.testing.conformance.ConformanceImpl;
import io.switchboard.testing.conformance.ConformanceStub;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * A cancel names a call id, and call ids leak (trace attributes): over a real mutual-TLS server,
 * a cancel of one caller's running call sent by another certificate, or by the same certificate
 * carrying another caller's verified token, cancels nothing; the caller's own cancel stops it.
 * A cancel that overtakes its call's request is kept for that call, of that caller only.
 */
class SoapCancelIdentityTest {
    private final TestCertificates certificates = TestCertificates.get();
    private final TestTokens tokens = TestTokens.get();
    private final ConformanceImpl impl = new ConformanceImpl();
    private final String callId = CallIds.next();
    private ProtocolServer server;
    /** The caller whose call ids the tests name: the SPIFFE certificate, no token. */
    private ProtocolClient owner;
    private Endpoint endpoint;

    @BeforeEach
    void serve() {
        SoapProtocolProvider provider = new SoapProtocolProvider();
        server = provider.newServer(ServerSettings.defaults()
                .withTls(certificates.serverMutual()).withTokenVerifier(tokens.verifier()));
        owner = provider.newClient(ClientSettings.defaults().withTls(certificates.spiffeClient())
                .withCallTimeout(Duration.ofMinutes(30)));
        endpoint = server.export(ConformanceComponent.skeleton(impl));
    }

    @AfterEach
    void close() {
        impl.stopSpinning = true;
        owner.close();
        server.close();
    }

    @Test
    void onlyTheCallersOwnCancelStopsItsCall() throws Exception {
        try (Transport transport = owner.connect(ConformanceComponent.DESCRIPTOR, endpoint)) {
            CompletableFuture<Long> spin = ConformanceComponent.stub(transport)
                    .withOptions(CallOptions.DEFAULT.withCallId(callId))
                    .spinAsync(new double[10], Integer.MAX_VALUE);
            assertTrue(impl.spinStarted.await(1, TimeUnit.MINUTES), "the work never started");

            assertEquals(202, cancel(endpoint, callId, certificates.dnsClient(), null),
                    "another certificate's cancel finds no call of its own (it is kept for one)");
            assertEquals(202, cancel(endpoint, callId, certificates.spiffeClient(), tokens.valid("mallory")),
                    "the owner's certificate with another caller's token is that caller");
            assertEquals(404, cancel(endpoint, callId, certificates.spiffeClient(), "not-a-token"),
                    "a token that does not verify cancels nothing");
            awaitMoreRounds(impl);
            assertEquals(1, impl.spinSawCancel.getCount(), "a stranger's cancel reached the operation");
            assertTrue(!spin.isDone(), "the call still runs");

            assertEquals(204, cancel(endpoint, callId, certificates.spiffeClient(), null),
                    "the caller's own cancel finds its call");
            assertTrue(impl.spinSawCancel.await(1, TimeUnit.MINUTES), "the owner's cancel reached the operation");
        }
    }

    @Test
    void aCancelBeforeItsCallKeepsThatCallFromRunningOnce() throws Exception {
        try (Transport transport = owner.connect(ConformanceComponent.DESCRIPTOR, endpoint)) {
            ConformanceStub stub = ConformanceComponent.stub(transport).withOptions(CallOptions.DEFAULT.withCallId(callId));

            assertEquals(202, cancel(endpoint, callId, certificates.spiffeClient(), null),
                    "no such call yet: the cancel is kept");
            RefusedException refused = assertThrows(RefusedException.class, () -> stub.increment(1));
            assertEquals("cancelled", refused.reason(), refused.getMessage());
            assertEquals(0, impl.increments.get(), "the cancelled call did not run");

            assertEquals(1, stub.increment(1), "the kept cancel was used up: the same id runs again");
            assertEquals(1, impl.increments.get());
        }
    }

    @Test
    void anotherCallersEarlyCancelLeavesThisCallerAlone() throws Exception {
        assertEquals(202, cancel(endpoint, callId, certificates.dnsClient(), null), "kept, for its own caller");
        assertEquals(202, cancel(endpoint, callId, certificates.spiffeClient(), tokens.valid("mallory")),
                "kept for mallory, whose token it carries");
        assertEquals(404, cancel(endpoint, callId, certificates.spiffeClient(), "not-a-token"),
                "a token that does not verify is not kept");
        assertEquals(404, cancel(endpoint, callId, certificates.spiffeClient(), null,
                SoapCalls.RUNNING_ONLY_HEADER, "true"), "the owner's cancel of a running call only is not kept");
        try (Transport transport = owner.connect(ConformanceComponent.DESCRIPTOR, endpoint)) {
            assertEquals(1, ConformanceComponent.stub(transport).withOptions(CallOptions.DEFAULT.withCallId(callId))
                    .increment(1), "the owner's call runs");
            assertEquals(1, impl.increments.get());
        }
    }

    /** Sends the cancel message as {@code tls}'s certificate (and {@code token}, if any): its HTTP status. */
    private static int cancel(Endpoint endpoint, String callId, TlsSettings tls, String token, String... headers)
            throws Exception {
        HttpClient http = HttpClient.newBuilder().sslContext(tls.context()).connectTimeout(Duration.ofMinutes(1)).build();
        HttpRequest.Builder request = HttpRequest.newBuilder(URI.create(endpoint.address()))
                .timeout(Duration.ofMinutes(1))
                .header(SoapCalls.CANCEL_HEADER, callId)
                .POST(HttpRequest.BodyPublishers.noBody());
        if (token != null) {
            request.header("Authorization", "Bearer " + token);
        }
        if (headers.length > 0) {
            request.headers(headers);
        }
        return http.send(request.build(), HttpResponse.BodyHandlers.discarding()).statusCode();
    }

    /** Waits until the operation has run more rounds: it kept running after the refused cancels were answered. */
    private static void awaitMoreRounds(ConformanceImpl impl) throws InterruptedException {
        long seen = impl.spinRounds.get();
        long deadline = System.nanoTime() + TimeUnit.MINUTES.toNanos(1);
        while (impl.spinRounds.get() < seen + 3) {
            assertTrue(System.nanoTime() < deadline, "the operation stopped running");
            Thread.sleep(5);
        }
    }
}
