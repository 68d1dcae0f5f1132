package io.switchboard.server.authz;

import io.switchboard.protocol.Endpoint;
import io.switchboard.protocol.spi.UnixSockets;

/** tcp over TCP: a certificate, a token ({@code authentication_data}) or nobody, allowed and denied by the policy. */
class TcpAuthorizationTest extends AuthorizationMatrix {
    @Override
    protected String protocolName() {
        return "tcp";
    }

    /** The served endpoint without the query that names its Unix socket, so that the call goes over TCP. */
    @Override
    protected Endpoint connectTo(Endpoint served) {
        return UnixSockets.overTcp(served);
    }
}
