package io.switchboard.server.authz;

import io.netty.channel.epoll.Epoll;
import io.switchboard.testing.ThisProcess;

/**
 * tcp over its Unix socket: a plain call is its process's uid ({@code SO_PEERCRED}), allowed when
 * the policy names that uid and denied when it names another; tokens as over TCP. Where epoll is
 * missing the server has no socket, and a plain call is anonymous over TCP.
 */
class TcpUnixAuthorizationTest extends AuthorizationMatrix {
    @Override
    protected String protocolName() {
        return "tcp";
    }

    @Override
    protected String plainPrincipal() {
        return Epoll.isAvailable() ? "uid:" + ThisProcess.uid() : null;
    }
}
