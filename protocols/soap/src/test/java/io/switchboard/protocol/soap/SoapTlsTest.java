package io.switchboard.protocol.soap;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.switchboard.protocol.ClientSettings;
import io.switchboard.protocol.Endpoint;
import io.switchboard.protocol.ServerSettings;
import io.switchboard.protocol.TlsSettings;
import io.switchboard.protocol.TransportException;
import io.switchboard.protocol.spi.ProtocolClient;
import io.switchboard.testing.TestCertificates;
import io.switchboard.testing.conformance.ConformanceComponent;
import io.switchboard.testing.conformance.ConformanceImpl;
import io.switchboard.testing.conformance.ConformanceStub;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.URI;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.concurrent.TimeUnit;
import javax.net.ssl.SSLSocket;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * SOAP over TLS (Jetty's SslContextFactory with the settings' key, from {@link TestCertificates}):
 * calls go through, a kept-alive connection is idle between calls and not held to a request's
 * deadline, a slow sender is cut with a 408 that travels through TLS, and plain HTTP is refused.
 */
class SoapTlsTest {
    private static SoapServer server;
    private static ProtocolClient client;
    private static ConformanceStub stub;
    private static Endpoint endpoint;
    private static TlsSettings trust;

    @BeforeAll
    static void start() throws Exception {
        TestCertificates certs = TestCertificates.get();
        trust = certs.clientWithoutKey();
        server = (SoapServer) new SoapProtocolProvider().newServer(ServerSettings.defaults()
                .withTls(certs.server()).withRequestTimeout(Duration.ofSeconds(1))
                .withIdleTimeout(Duration.ofSeconds(30)));
        endpoint = server.export(ConformanceComponent.skeleton(new ConformanceImpl()));
        client = new SoapProtocolProvider().newClient(ClientSettings.defaults().withTls(trust));
        stub = ConformanceComponent.stub(client.connect(ConformanceComponent.DESCRIPTOR, endpoint));
    }

    @AfterAll
    static void stop() {
        if (client != null) {
            client.close();
        }
        if (server != null) {
            server.close();
        }
    }

    @Test
    void aKeptAliveConnectionIsIdleBetweenCallsAndOutlivesTheRequestDeadline() throws Exception {
        assertTrue(endpoint.address().startsWith("https://127.0.0.1:"), endpoint.address());
        double[] values = {1.5, -0.0, Double.NaN};
        assertArrayEquals(values, stub.echoDoubles(values));
        long end = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
        while (server.connector().busyConnections() > 0) {   // the server counts the exchange ended just after the answer
            assertTrue(System.nanoTime() < end, "the connection is idle after its answer");
            Thread.sleep(10);
        }
        int open = server.connector().openConnections();
        // The time is the behaviour: an idle connection is not in a request, so the 1 s request deadline
        // must not close it; 2.5 s leaves 1.5 s of margin past that deadline.
        Thread.sleep(2500);
        assertEquals(open, server.connector().openConnections(), "the idle connection was kept");
        assertArrayEquals(values, stub.echoDoubles(values));
    }

    @Test
    void aSlowSenderIsCutWithA408ThroughTls() throws Exception {
        URI uri = URI.create(endpoint.address());
        try (SSLSocket s = (SSLSocket) trust.context().getSocketFactory().createSocket(uri.getHost(), uri.getPort())) {
            s.setSoTimeout(15_000);
            s.startHandshake();
            OutputStream out = s.getOutputStream();
            long start = System.nanoTime();
            try {
                for (byte b : "POST /axis2/services/Conformance HTTP/1.1\r\nHost: x\r\n".getBytes(StandardCharsets.US_ASCII)) {
                    out.write(b);
                    out.flush();
                    Thread.sleep(200);
                }
            } catch (IOException closed) {
                // the server hung up
            }
            ByteArrayOutputStream got = new ByteArrayOutputStream();
            try {
                InputStream in = s.getInputStream();
                byte[] buf = new byte[4096];
                for (int n; (n = in.read(buf)) >= 0; ) {
                    got.write(buf, 0, n);
                }
            } catch (IOException e) {
                // a reset after the 408 also ends it
            }
            long millis = (System.nanoTime() - start) / 1_000_000;
            assertTrue(got.toString(StandardCharsets.US_ASCII).startsWith("HTTP/1.1 408"), got.toString());
            // The limit is the behaviour: cut by the 1 s request deadline, not when the sender's
            // 10 s of headers end; 9 s of margin.
            assertTrue(millis < 10_000, "cut after " + millis + " ms");
        }
        stub.ping();
    }

    @Test
    void plainHttpOnTheTlsPortIsRefused() {
        Endpoint plain = new Endpoint("soap", endpoint.address().replaceFirst("^https:", "http:"));
        try (ProtocolClient plainClient = new SoapProtocolProvider().newClient(ClientSettings.defaults())) {
            ConformanceStub s = ConformanceComponent.stub(plainClient.connect(ConformanceComponent.DESCRIPTOR, plain));
            assertThrows(TransportException.class, s::ping);
        }
        stub.ping();
    }
}
