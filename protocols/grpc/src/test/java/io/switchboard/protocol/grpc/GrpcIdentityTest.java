package io.switchboard.protocol.grpc;

import io.switchboard.protocol.Endpoint;
import io.switchboard.protocol.spi.UnixSockets;
import io.switchboard.testing.conformance.AbstractIdentityConformanceTest;

/** gRPC over TCP tells its operations who called: certificate, token or nobody. */
class GrpcIdentityTest extends AbstractIdentityConformanceTest {
    @Override
    protected String protocolName() {
        return "grpc";
    }

    @Override
    protected Endpoint connectTo(Endpoint served) {
        return UnixSockets.overTcp(served);
    }
}
