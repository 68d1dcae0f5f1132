package io.switchboard.protocol.soap;

import io.switchboard.protocol.Endpoint;
import io.switchboard.testing.conformance.AbstractProtocolConformanceTest;

/** SOAP passes the protocol conformance suite. */
class SoapConformanceTest extends AbstractProtocolConformanceTest {
    @Override
    protected String protocolName() {
        return "soap";
    }

    @Override
    protected Endpoint deadEndpoint(int port) {
        return new Endpoint("soap", "http://127.0.0.1:" + port + "/axis2/services/Conformance");
    }
}
