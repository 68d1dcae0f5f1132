package io.switchboard.testing.conformance;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.switchboard.protocol.ClientSettings;
import io.switchboard.protocol.Peer;
import io.switchboard.testing.ThisProcess;
import org.junit.jupiter.api.Test;

/**
 * The identity suite over a server's Unix socket (the endpoint as served, on the server's host): a
 * call without a token is the calling process's uid ({@code SO_PEERCRED}) at the socket's path; a
 * token still wins, the socket still its address. Where epoll is missing the server has no socket,
 * and calls go over TCP as the base suite expects.
 *
 * <pre>{@code
 * class TcpUnixIdentityTest extends AbstractUnixIdentityTest {
 *     protected String protocolName() { return "tcp"; }
 *     protected String unixSocketFile() { return UnixSockets.TCP.file(); }
 *     protected boolean epollAvailable() { return Epoll.isAvailable(); }
 * }
 * }</pre>
 */
public abstract class AbstractUnixIdentityTest extends AbstractIdentityConformanceTest {
    /** The name of the server's socket file ({@code tcp.sock}, {@code grpc.sock}). */
    protected abstract String unixSocketFile();

    /** Whether Netty's epoll transport, as the protocol uses it, is there (Linux): without it no socket. */
    protected abstract boolean epollAvailable();

    @Override
    protected void assertPlainPeer(Peer peer) {
        if (!epollAvailable()) {
            super.assertPlainPeer(peer);
            return;
        }
        assertEquals(Peer.of("uid:" + ThisProcess.uid(), Peer.Authentication.UNIX_SOCKET, peer.remoteAddress()), peer);
        assertTrue(peer.remoteAddress().endsWith("/" + unixSocketFile()), peer.remoteAddress());
    }

    @Test
    void aTokenOverTheUnixSocketStillKeepsTheSocketAsItsAddress() {
        Peer peer = peerOf(plainEndpoint(), ClientSettings.defaults().withToken(() -> tokens.valid("carol")));
        assertEquals(Peer.Authentication.TOKEN, peer.authentication());
        assertEquals("carol", peer.principal());
        if (epollAvailable()) {
            assertTrue(peer.remoteAddress().endsWith("/" + unixSocketFile()), peer.remoteAddress());
        }
    }
}
