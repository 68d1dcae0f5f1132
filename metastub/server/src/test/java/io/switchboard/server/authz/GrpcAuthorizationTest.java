package io.switchboard.server.authz;

import io.switchboard.protocol.Endpoint;
import io.switchboard.protocol.spi.UnixSockets;

/** gRPC over TCP: a certificate, a token or nobody, allowed and denied by the policy. */
class GrpcAuthorizationTest extends AuthorizationMatrix {
    @Override
    protected String protocolName() {
        return "grpc";
    }

    /** The served endpoint without the query that names its Unix socket, so that the call goes over TCP. */
    @Override
    protected Endpoint connectTo(Endpoint served) {
        return UnixSockets.overTcp(served);
    }
}
