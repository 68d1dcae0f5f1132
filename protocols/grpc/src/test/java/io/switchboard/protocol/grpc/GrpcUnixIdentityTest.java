package io.switchboard.protocol.grpc;

import io.grpc.netty.shaded.io.netty.channel.epoll.Epoll;
import io.switchboard.protocol.spi.UnixSockets;
import io.switchboard.testing.conformance.AbstractIdentityConformanceTest;

/**
 * gRPC over its Unix socket: a call without a token is the peer process's uid ({@code SO_PEERCRED}),
 * as over tcp's; a token still wins. Where epoll is missing the server has no socket and calls go
 * over TCP.
 */
class GrpcUnixIdentityTest extends AbstractIdentityConformanceTest {
    @Override
    protected String protocolName() {
        return "grpc";
    }

    @Override
    protected String unixSocketFile() {
        return Epoll.isAvailable() ? UnixSockets.GRPC.file() : null;
    }
}
