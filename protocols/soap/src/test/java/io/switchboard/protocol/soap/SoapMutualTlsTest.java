package io.switchboard.protocol.soap;

import io.switchboard.protocol.Endpoint;
import io.switchboard.testing.conformance.AbstractMutualTlsTest;

/** SOAP over https with client certificates (Jetty's SslContextFactory with needClientAuth). */
class SoapMutualTlsTest extends AbstractMutualTlsTest {
    @Override
    protected String protocolName() {
        return "soap";
    }

    @Override
    protected Endpoint plainTextForm(Endpoint tlsEndpoint) {
        return new Endpoint("soap", tlsEndpoint.address().replaceFirst("^https:", "http:"));
    }
}
