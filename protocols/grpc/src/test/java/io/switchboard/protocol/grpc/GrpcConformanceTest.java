package io.switchboard.protocol.grpc;

import io.switchboard.protocol.Endpoint;
import io.switchboard.testing.conformance.AbstractProtocolConformanceTest;

/** gRPC passes the protocol conformance suite. */
class GrpcConformanceTest extends AbstractProtocolConformanceTest {
    @Override
    protected String protocolName() {
        return "grpc";
    }

    @Override
    protected Endpoint deadEndpoint(int port) {
        return new Endpoint("grpc", "grpc://127.0.0.1:" + port + "/Conformance");
    }
}
