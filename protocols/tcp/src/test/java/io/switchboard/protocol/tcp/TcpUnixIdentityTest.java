package io.switchboard.protocol.tcp;

import io.netty.channel.epoll.Epoll;
import io.switchboard.protocol.spi.UnixSockets;
import io.switchboard.testing.conformance.AbstractIdentityConformanceTest;

/**
 * tcp over its Unix socket: a call without a token is the peer process's uid ({@code SO_PEERCRED});
 * a token still wins. Where epoll is missing the server has no socket and calls go over TCP.
 */
class TcpUnixIdentityTest extends AbstractIdentityConformanceTest {
    @Override
    protected String protocolName() {
        return "tcp";
    }

    @Override
    protected String unixSocketFile() {
        return Epoll.isAvailable() ? UnixSockets.TCP.file() : null;
    }
}
