package io.switchboard.protocol.tcp;

import io.netty.channel.epoll.Epoll;
import io.switchboard.protocol.spi.ProtocolServer;
import io.switchboard.protocol.spi.UnixSockets;
import io.switchboard.testing.conformance.AbstractUnixSocketTest;
import java.nio.file.Path;

/** tcp's Unix socket on the same host; the shared cases in {@link AbstractUnixSocketTest}. */
class TcpUnixSocketTest extends AbstractUnixSocketTest {
    @Override
    protected String protocolName() {
        return "tcp";
    }

    @Override
    protected UnixSockets sockets() {
        return UnixSockets.TCP;
    }

    @Override
    protected boolean epollAvailable() {
        return Epoll.isAvailable();
    }

    @Override
    protected Path unixSocketOf(ProtocolServer server) {
        return ((TcpServer) server).unixSocket();
    }
}
