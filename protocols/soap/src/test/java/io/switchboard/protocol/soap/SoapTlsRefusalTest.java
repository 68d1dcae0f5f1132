package io.switchboard.protocol.soap;

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
}
