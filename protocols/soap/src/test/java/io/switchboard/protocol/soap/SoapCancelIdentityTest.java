package io.switchboard.protocol.soap;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.switchboard.protocol.CallIds;
import io.switchboard.protocol.CallOptions;
import io.switchboard.protocol.ClientSettings;
import io.switchboard.protocol.Endpoint;
import io.switchboard.protocol.ServerSettings;
import io.switchboard.protocol.TlsSettings;
import io.switchboard.protocol.spi.ProtocolClient;
import io.switchboard.protocol.spi.ProtocolServer;
import io.switchboard.protocol.spi.Transport;
import io.switchboard.testing.TestCertificates;
import io.switchboard.testing.TestTokens;
import io.switchboard.testing.conformance.ConformanceComponent;
import io.switchboard.testing.conformance.ConformanceImpl;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

/**
 * A cancel names a call id, and call ids leak (trace attributes): over a real mutual-TLS server,
 * a cancel of one caller's running call sent by another certificate, or by the same certificate
 * carrying another caller's verified token, cancels nothing; the caller's own cancel stops it.
 */
class SoapCancelIdentityTest {
    private final TestCertificates certificates = TestCertificates.get();
    private final TestTokens tokens = TestTokens.get();

    @Test
    void onlyTheCallersOwnCancelStopsItsCall() throws Exception {
        ConformanceImpl impl = new ConformanceImpl();
        SoapProtocolProvider provider = new SoapProtocolProvider();
        String callId = CallIds.next();
        try (ProtocolServer server = provider.newServer(ServerSettings.defaults()
                .withTls(certificates.serverMutual()).withTokenVerifier(tokens.verifier()));
             ProtocolClient owner = provider.newClient(ClientSettings.defaults().withTls(certificates.spiffeClient())
                     .withCallTimeout(Duration.ofMinutes(30)))) {
            Endpoint endpoint = server.export(ConformanceComponent.skeleton(impl));
            Transport transport = owner.connect(ConformanceComponent.DESCRIPTOR, endpoint);
            try {
                CompletableFuture<Long> spin = ConformanceComponent.stub(transport)
                        .withOptions(CallOptions.DEFAULT.withCallId(callId))
                        .spinAsync(new double[10], Integer.MAX_VALUE);
                assertTrue(impl.spinStarted.await(1, TimeUnit.MINUTES), "the work never started");

                assertEquals(404, cancel(endpoint, callId, certificates.dnsClient(), null),
                        "another certificate's cancel finds no call of its own");
                assertEquals(404, cancel(endpoint, callId, certificates.spiffeClient(), tokens.valid("mallory")),
                        "the owner's certificate with another caller's token is that caller");
                assertEquals(404, cancel(endpoint, callId, certificates.spiffeClient(), "not-a-token"),
                        "a token that does not verify cancels nothing");
                awaitMoreRounds(impl);
                assertEquals(1, impl.spinSawCancel.getCount(), "a stranger's cancel reached the operation");
                assertTrue(!spin.isDone(), "the call still runs");

                assertEquals(204, cancel(endpoint, callId, certificates.spiffeClient(), null),
                        "the caller's own cancel finds its call");
                assertTrue(impl.spinSawCancel.await(1, TimeUnit.MINUTES), "the owner's cancel reached the operation");
            } finally {
                impl.stopSpinning = true;
                transport.close();
            }
        }
    }

    /** Sends the cancel message as {@code tls}'s certificate (and {@code token}, if any): its HTTP status. */
    private static int cancel(Endpoint endpoint, String callId, TlsSettings tls, String token) throws Exception {
        HttpClient http = HttpClient.newBuilder().sslContext(tls.context()).connectTimeout(Duration.ofMinutes(1)).build();
        HttpRequest.Builder request = HttpRequest.newBuilder(URI.create(endpoint.address()))
                .timeout(Duration.ofMinutes(1))
                .header(SoapCalls.CANCEL_HEADER, callId)
                .POST(HttpRequest.BodyPublishers.noBody());
        if (token != null) {
            request.header("Authorization", "Bearer " + token);
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
