package io.switchboard.protocol.grpc;

import io.switchboard.testing.conformance.AbstractIdentityConformanceTest;

/** gRPC tells its operations who called: certificate, token or nobody. */
class GrpcIdentityTest extends AbstractIdentityConformanceTest {
    @Override
    protected String protocolName() {
        return "grpc";
    }
}
