package io.switchboard.protocol.local;

import io.switchboard.protocol.Endpoint;
import io.switchboard.testing.conformance.AbstractProtocolConformanceTest;

/** The local protocol passes the protocol conformance suite. */
class LocalConformanceTest extends AbstractProtocolConformanceTest {
    @Override
    protected String protocolName() {
        return "local";
    }

    /** Nothing listens on ports here: a local endpoint of this JVM where nothing is exported. */
    @Override
    protected Endpoint deadEndpoint(int port) {
        return new Endpoint("local", "local://" + LocalProtocolProvider.jvmId() + "/s-none-" + port + "/Conformance");
    }
}
