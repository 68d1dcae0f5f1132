package io.switchboard.protocol.soap;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.switchboard.protocol.Endpoint;
import io.switchboard.protocol.ServerSettings;
import io.switchboard.protocol.spi.TlsRefusals;
import io.switchboard.testing.TestCertificates;
import io.switchboard.testing.conformance.ConformanceComponent;
import io.switchboard.testing.conformance.ConformanceImpl;
import java.io.IOException;
import java.io.OutputStream;
import java.net.URI;
import java.nio.charset.StandardCharsets;
import javax.net.ssl.SSLException;
import javax.net.ssl.SSLSocket;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * A caller whose certificate the SOAP server refuses hears the refusal, also when it is still
 * writing its request as the server closes. Under TLS 1.3 a client's half of the handshake ends
 * before the server checks its certificate, and it sends its request at once; a server that closes
 * with that request unread resets the connection, and the client, still writing, sees a broken
 * pipe: its call "may have run". The server's close lingers instead (its input read and dropped),
 * so the writes go through and the client reads the server's alert.
 */
class SoapTlsRefusalTest {
    private SoapServer server;

    @AfterEach
    void stop() {
        if (server != null) {
            server.close();
        }
    }

    @Test
    void aRefusedCallerStillWritingReadsTheAlertNotAReset() throws Exception {
        TestCertificates certs = TestCertificates.get();
        server = (SoapServer) new SoapProtocolProvider().newServer(ServerSettings.defaults().withTls(certs.serverMutual()));
        ConformanceImpl impl = new ConformanceImpl();
        Endpoint endpoint = server.export(ConformanceComponent.skeleton(impl));
        URI uri = URI.create(endpoint.address());
        long refusedBefore = server.refusedConnections();
        try (SSLSocket socket = (SSLSocket) certs.rogueClient().context().getSocketFactory()
                .createSocket(uri.getHost(), uri.getPort())) {
            socket.setSoTimeout(15_000);
            socket.startHandshake();   // TLS 1.3: done on this side before the server has judged the certificate
            OutputStream out = socket.getOutputStream();
            out.write(("POST " + uri.getPath() + " HTTP/1.1\r\nHost: x\r\nContent-Type: text/xml\r\nContent-Length: 2000000"
                    + "\r\n\r\n").getBytes(StandardCharsets.US_ASCII));
            out.flush();
            long end = System.nanoTime() + 15_000_000_000L;
            while (server.refusedConnections() == refusedBefore) {   // the server has refused it (and closes)
                assertTrue(System.nanoTime() < end, "the server did not refuse the certificate");
                Thread.sleep(10);
            }
            byte[] body = new byte[64 << 10];
            try {
                for (int i = 0; i < 30; i++) {   // the request's body, written after the refusal
                    out.write(body);
                    out.flush();
                }
            } catch (IOException e) {
                throw new AssertionError("the connection broke under the writer instead of answering with the alert", e);
            }
            SSLException refusal = assertThrows(SSLException.class, () -> socket.getInputStream().read());
            assertTrue(TlsRefusals.refusedHandshake(refusal), "read the server's alert: " + refusal);
        }
        assertTrue(impl.pings.get() == 0);
    }

    /**
     * A refused connection's lingering close keeps its socket open after Jetty let it go, outside
     * the connection limits: a flood of refused handshakes lingers at most {@code maxConnections}
     * sockets at once, the rest closed at once.
     */
    @Test
    void aFloodOfRefusedHandshakesLingersNoMoreThanTheConnectionLimit() throws Exception {
        TestCertificates certs = TestCertificates.get();
        int limit = 4;
        server = (SoapServer) new SoapProtocolProvider().newServer(ServerSettings.defaults().withTls(certs.serverMutual())
                .withMaxConnections(limit));
        Endpoint endpoint = server.export(ConformanceComponent.skeleton(new ConformanceImpl()));
        URI uri = URI.create(endpoint.address());
        java.util.List<SSLSocket> open = new java.util.ArrayList<>();
        try {
            for (int i = 0; i < 20; i++) {
                // kept open: its lingering ends at the linger time, not at its end of the stream
                open.add(refusedWhileWriting(certs, uri, "127.0.0.1"));
                int now = server.connector().lingeringConnections();
                assertTrue(now <= limit, now + " sockets lingering, over the limit of " + limit);
            }
        } finally {
            for (SSLSocket socket : open) {
                socket.close();
            }
        }
        assertTrue(server.connector().lingeredConnections() >= 1, "no refused connection lingered");
    }

    /**
     * One host's flood of refused handshakes fills only its own share of the lingering sockets
     * ({@code maxConnectionsPerAddress}): another host's refusal still lingers, so its caller
     * still reads the alert rather than a reset.
     */
    @Test
    void oneHostsFloodLeavesAnotherHostsRefusalItsLinger() throws Exception {
        TestCertificates certs = TestCertificates.get();
        server = (SoapServer) new SoapProtocolProvider().newServer(ServerSettings.defaults().withTls(certs.serverMutual())
                .withMaxConnections(4).withMaxConnectionsPerAddress(2));
        Endpoint endpoint = server.export(ConformanceComponent.skeleton(new ConformanceImpl()));
        server.connector().lingerNanos = 600_000_000_000L;   // none ends on its own while the test counts
        URI uri = URI.create(endpoint.address());
        java.util.List<SSLSocket> open = new java.util.ArrayList<>();
        try {
            for (int i = 0; i < 5; i++) {
                open.add(refusedWhileWriting(certs, uri, "127.0.0.1"));
            }
            assertEquals(2, server.connector().lingeringConnections(), "one host's share of the lingering sockets");
            assertEquals(3, server.connector().closedUnlingered());
            open.add(refusedWhileWriting(certs, uri, "127.0.0.2"));
            assertEquals(3, server.connector().lingeringConnections(), "another host's refusal lingers too");
            assertEquals(3, server.connector().closedUnlingered());
        } finally {
            for (SSLSocket socket : open) {
                socket.close();
            }
        }
    }

    /**
     * A rogue client from {@code source} that writes a request after its refused handshake; waits
     * until the server has closed it, lingering or not.
     */
    private SSLSocket refusedWhileWriting(TestCertificates certs, URI uri, String source) throws Exception {
        long closedBefore = closedAfterRefusal();
        SSLSocket socket = (SSLSocket) certs.rogueClient().context().getSocketFactory()
                .createSocket(uri.getHost(), uri.getPort(), java.net.InetAddress.getByName(source), 0);
        socket.setSoTimeout(15_000);
        try {
            socket.startHandshake();   // the client's certificate goes out with its half: the server may refuse meanwhile
            socket.getOutputStream().write("POST / HTTP/1.1\r\n".getBytes(StandardCharsets.US_ASCII));
        } catch (IOException closedAtOnce) {
            // past its share of the lingering sockets: closed at once, so a reset may come first
        }
        long end = System.nanoTime() + 15_000_000_000L;
        while (closedAfterRefusal() == closedBefore) {
            assertTrue(System.nanoTime() < end, "the server did not refuse the certificate");
            Thread.sleep(5);
        }
        return socket;
    }

    private long closedAfterRefusal() {
        return server.connector().lingeredConnections() + server.connector().closedUnlingered();
    }
}
