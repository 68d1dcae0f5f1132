package io.switchboard.protocol.tcp;

import io.switchboard.protocol.Endpoint;
import io.switchboard.protocol.spi.UnixSockets;
import io.switchboard.testing.conformance.AbstractIdentityConformanceTest;

/** tcp over TCP tells its operations who called: certificate, token (authentication_data) or nobody. */
class TcpIdentityTest extends AbstractIdentityConformanceTest {
    @Override
    protected String protocolName() {
        return "tcp";
    }

    /** The served endpoint without the query that names its Unix socket. */
    @Override
    protected Endpoint connectTo(Endpoint served) {
        return UnixSockets.overTcp(served);
    }
}
