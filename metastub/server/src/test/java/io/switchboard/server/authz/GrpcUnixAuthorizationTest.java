package io.switchboard.server.authz;

import io.grpc.netty.shaded.io.netty.channel.epoll.Epoll;
import io.switchboard.testing.ThisProcess;

/**
 * gRPC over its Unix socket: a plain call is its process's uid ({@code SO_PEERCRED}), as over
 * tcp's; tokens and certificates as over TCP. Where epoll is missing the server has no socket, and
 * a plain call is anonymous over TCP.
 */
class GrpcUnixAuthorizationTest extends AuthorizationMatrix {
    @Override
    protected String protocolName() {
        return "grpc";
    }

    @Override
    protected String plainPrincipal() {
        return Epoll.isAvailable() ? "uid:" + ThisProcess.uid() : null;
    }
}
