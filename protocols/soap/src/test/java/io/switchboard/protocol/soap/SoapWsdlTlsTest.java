package io.switchboard.protocol.soap;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.switchboard.protocol.Endpoint;
import io.switchboard.protocol.ServerSettings;
import io.switchboard.protocol.TlsSettings;
import io.switchboard.protocol.spi.ProtocolServer;
import io.switchboard.testing.ServedWsdl;
import io.switchboard.testing.TestCertificates;
import io.switchboard.testing.conformance.ConformanceComponent;
import io.switchboard.testing.conformance.ConformanceImpl;
import java.io.IOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import org.junit.jupiter.api.Test;

/**
 * {@code ?wsdl} of a SOAP server on TLS answers the component's WSDL with the {@code https://}
 * address it was exported at, with and without client certificates required (the compiler's WSDL
 * carries an {@code http://} placeholder, which Axis2 alone rewrites only for a listener of the
 * same scheme); plain HTTP is {@link SoapWsdlTest}.
 */
class SoapWsdlTlsTest {
    private final TestCertificates certs = TestCertificates.get();

    @Test
    void serverOnlyTlsServesTheWsdlWithItsHttpsAddress() throws Exception {
        try (ProtocolServer soap = new SoapProtocolProvider().newServer(ServerSettings.defaults().withTls(certs.server()))) {
            assertServesItsHttpsAddress(soap.export(ConformanceComponent.skeleton(new ConformanceImpl())),
                    certs.clientWithoutKey());
        }
    }

    @Test
    void mutualTlsServesTheWsdlWithItsHttpsAddressToATrustedClientOnly() throws Exception {
        try (ProtocolServer soap = new SoapProtocolProvider().newServer(
                ServerSettings.defaults().withTls(certs.serverMutual()))) {
            Endpoint endpoint = soap.export(ConformanceComponent.skeleton(new ConformanceImpl()));
            assertServesItsHttpsAddress(endpoint, certs.client());
            assertThrows(IOException.class, () -> get(certs.clientWithoutKey(), endpoint.address() + "?wsdl"));
        }
    }

    private static void assertServesItsHttpsAddress(Endpoint endpoint, TlsSettings client) throws Exception {
        assertTrue(endpoint.address().startsWith("https://127.0.0.1:"), endpoint.address());
        for (int i = 0; i < 2; i++) {   // the second answer is the same: nothing is rewritten per request
            HttpResponse<String> r = get(client, endpoint.address() + "?wsdl");
            assertEquals(200, r.statusCode(), r.body());
            assertEquals(endpoint.address(), ServedWsdl.soapAddress(r.body()));
        }
    }

    private static HttpResponse<String> get(TlsSettings client, String url) throws IOException, InterruptedException {
        return HttpClient.newBuilder().sslContext(client.context()).build()
                .send(HttpRequest.newBuilder(URI.create(url)).GET().build(), HttpResponse.BodyHandlers.ofString());
    }
}
