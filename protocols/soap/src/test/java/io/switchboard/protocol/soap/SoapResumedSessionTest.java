package io.switchboard.protocol.soap;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.switchboard.protocol.Endpoint;
import io.switchboard.protocol.ServerSettings;
import io.switchboard.testing.CountingSkeleton;
import io.switchboard.testing.TestCertificates;
import io.switchboard.testing.conformance.ConformanceComponent;
import io.switchboard.testing.conformance.ConformanceImpl;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.net.URI;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicInteger;
import javax.net.ssl.SSLContext;
import javax.net.ssl.SSLSocket;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * A client revoked since its TLS session began resumes that session, whose handshake shows the
 * server no certificate: whatever it then sends over SOAP, by hand, is refused unread and unrun
 * (a call with an unauthenticated fault in the SOAP version it spoke, a page with a 403), and its
 * connection closes after the answer.
 */
class SoapResumedSessionTest {
    private static final String SOAP12_CALL = "<?xml version='1.0' encoding='UTF-8'?><soapenv:Envelope"
            + " xmlns:soapenv=\"http://www.w3.org/2003/05/soap-envelope\"><soapenv:Body><c:ping"
            + " xmlns:c=\"urn:x\"/></soapenv:Body></soapenv:Envelope>";

    @Test
    void whatARevokedClientSendsOnItsResumedSessionIsRefusedUnread(@TempDir Path dir) throws Exception {
        TestCertificates certs = TestCertificates.get();
        TestCertificates.RevocationFile crl = certs.revocationFile(dir);
        Map<String, AtomicInteger> count = new ConcurrentHashMap<>();
        try (SoapServer server = (SoapServer) new SoapProtocolProvider().newServer(ServerSettings.defaults()
                .withTls(certs.serverMutual().withRevocationList(crl.path())))) {
            Endpoint endpoint = server.export(new CountingSkeleton(ConformanceComponent.skeleton(new ConformanceImpl()),
                    "runs", count, label -> { }));
            URI uri = URI.create(endpoint.address());
            SSLContext client = certs.client().context();   // one context: its sessions resume
            String wsdl = "GET " + uri.getPath() + "?wsdl HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n";
            assertTrue(exchange(client, uri, wsdl).startsWith("HTTP/1.1 200"), "trusted, the WSDL is served");

            crl.revoke(certs.clientKeyStore());
            long refused = server.refusedConnections();
            String page = exchange(client, uri, wsdl);
            assertTrue(page.startsWith("HTTP/1.1 403"), page);
            assertTrue(page.contains("no longer trusted"), page);
            assertTrue(!page.contains("wsdl"), "the WSDL was served: " + page);

            byte[] body = SOAP12_CALL.getBytes(StandardCharsets.UTF_8);
            String call = exchange(client, uri, "POST " + uri.getPath() + " HTTP/1.1\r\nHost: x\r\nContent-Type:"
                    + " application/soap+xml; charset=UTF-8\r\nContent-Length: " + body.length + "\r\n\r\n" + SOAP12_CALL);
            assertTrue(call.startsWith("HTTP/1.1 400"), call);
            assertTrue(call.contains("<sb:PermissionDenied xmlns:sb=\"urn:switchboard:soap\" reason=\"unauthenticated\"/>"),
                    call);
            assertTrue(call.contains("soapenv:Sender") && call.contains("did not run"), call);
            assertEquals(2, server.refusedConnections() - refused);
            assertEquals(null, count.get("runs"), "a call ran");
        }
    }

    /** Sends {@code request} on a new connection and reads until the server closes it (at most 30 s a read). */
    private static String exchange(SSLContext client, URI uri, String request) throws IOException {
        try (SSLSocket socket = (SSLSocket) client.getSocketFactory().createSocket(uri.getHost(), uri.getPort())) {
            socket.setSoTimeout(30_000);
            socket.getOutputStream().write(request.getBytes(StandardCharsets.UTF_8));
            socket.getOutputStream().flush();
            InputStream in = socket.getInputStream();
            ByteArrayOutputStream answer = new ByteArrayOutputStream();
            byte[] chunk = new byte[8192];
            for (int n; (n = in.read(chunk)) >= 0; ) {
                answer.write(chunk, 0, n);
            }
            return answer.toString(StandardCharsets.UTF_8);
        }
    }
}
