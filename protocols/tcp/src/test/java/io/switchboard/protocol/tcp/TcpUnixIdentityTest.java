package io.switchboard.protocol.tcp;

import io.netty.channel.epoll.Epoll;
import io.switchboard.protocol.spi.UnixSockets;
import io.switchboard.testing.conformance.AbstractUnixIdentityTest;

/** tcp over its Unix socket: the uid of the calling process; see {@link AbstractUnixIdentityTest}. */
class TcpUnixIdentityTest extends AbstractUnixIdentityTest {
    @Override
    protected String protocolName() {
        return "tcp";
    }

    @Override
    protected String unixSocketFile() {
        return UnixSockets.TCP.file();
    }

    @Override
    protected boolean epollAvailable() {
        return Epoll.isAvailable();
    }
}
