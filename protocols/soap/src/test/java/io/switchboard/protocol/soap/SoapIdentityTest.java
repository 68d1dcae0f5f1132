package io.switchboard.protocol.soap;

import io.switchboard.testing.conformance.AbstractIdentityConformanceTest;

/** SOAP tells its operations who called: certificate, token or nobody. */
class SoapIdentityTest extends AbstractIdentityConformanceTest {
    @Override
    protected String protocolName() {
        return "soap";
    }
}
