package io.switchboard.protocol.tcp;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.netty.channel.epoll.Epoll;
import io.switchboard.protocol.ClientSettings;
import io.switchboard.protocol.Peer;
import io.switchboard.protocol.spi.UnixSockets;
import io.switchboard.testing.conformance.AbstractIdentityConformanceTest;
import java.nio.file.Files;
import java.nio.file.Path;
import org.junit.jupiter.api.Test;

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
    protected void assertPlainPeer(Peer peer) {
        if (!Epoll.isAvailable()) {
            super.assertPlainPeer(peer);
            return;
        }
        assertEquals(Peer.of("uid:" + ownUid(), Peer.Authentication.UNIX_SOCKET, peer.remoteAddress()), peer);
        assertTrue(peer.remoteAddress().endsWith(UnixSockets.TCP.file()), peer.remoteAddress());
    }

    @Test
    void aTokenOverTheUnixSocketStillKeepsTheSocketAsItsAddress() {
        Peer peer = peerOf(plainEndpoint(), ClientSettings.defaults().withToken(() -> tokens.valid("carol")));
        assertEquals(Peer.Authentication.TOKEN, peer.authentication());
        if (Epoll.isAvailable()) {
            assertTrue(peer.remoteAddress().endsWith(UnixSockets.TCP.file()), peer.remoteAddress());
        }
    }

    /** This process's uid, as the kernel gives it to the other end of a Unix socket. */
    private static int ownUid() {
        try {
            return (Integer) Files.getAttribute(Path.of("/proc/self"), "unix:uid");
        } catch (java.io.IOException e) {
            throw new java.io.UncheckedIOException(e);
        }
    }
}
