package io.switchboard.protocol.grpc;

import io.switchboard.protocol.Endpoint;
import io.switchboard.testing.conformance.AbstractMutualTlsTest;

/** gRPC over TLS with client certificates (grpc-java's TlsServerCredentials, ClientAuth.REQUIRE). */
class GrpcMutualTlsTest extends AbstractMutualTlsTest {
    @Override
    protected String protocolName() {
        return "grpc";
    }

    /** BoringSSL (netty-tcnative) does not resume these sessions: the handshake checks the chain every time. */
    @Override
    protected boolean resumesSessions() {
        return false;
    }

    @Override
    protected Endpoint plainTextForm(Endpoint tlsEndpoint) {
        return new Endpoint("grpc", tlsEndpoint.address().replaceFirst("^grpcs:", "grpc:"));
    }
}
