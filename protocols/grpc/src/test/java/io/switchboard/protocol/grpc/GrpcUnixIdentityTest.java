package io.switchboard.protocol.grpc;

import io.grpc.netty.shaded.io.netty.channel.epoll.Epoll;
import io.switchboard.protocol.spi.UnixSockets;
import io.switchboard.testing.conformance.AbstractUnixIdentityTest;

/** gRPC over its Unix socket: the uid of the calling process, as over tcp's; see {@link AbstractUnixIdentityTest}. */
class GrpcUnixIdentityTest extends AbstractUnixIdentityTest {
    @Override
    protected String protocolName() {
        return "grpc";
    }

    @Override
    protected String unixSocketFile() {
        return UnixSockets.GRPC.file();
    }

    @Override
    protected boolean epollAvailable() {
        return Epoll.isAvailable();
    }
}
