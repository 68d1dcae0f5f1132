package io.switchboard.protocol.grpc;

import io.switchboard.protocol.Endpoint;
import io.switchboard.protocol.spi.UnixSockets;
import io.switchboard.testing.conformance.AbstractProtocolConformanceTest;

/**
 * gRPC passes the protocol conformance suite over TCP: the client connects to the endpoint without
 * its Unix socket ({@link GrpcUnixConformanceTest} runs the suite over that).
 */
class GrpcConformanceTest extends AbstractProtocolConformanceTest {
    @Override
    protected String protocolName() {
        return "grpc";
    }

    @Override
    protected Endpoint connectTo(Endpoint served) {
        return UnixSockets.overTcp(served);
    }

    @Override
    protected String expectedVia() {
        return UnixSockets.VIA_TCP;
    }

    @Override
    protected Endpoint deadEndpoint(int port) {
        return new Endpoint("grpc", "grpc://127.0.0.1:" + port + "/Conformance");
    }
}
