package io.switchboard.protocol.tcp;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import io.netty.channel.epoll.Epoll;
import io.switchboard.protocol.ClientSettings;
import io.switchboard.protocol.Endpoint;
import io.switchboard.protocol.ServerSettings;
import io.switchboard.protocol.spi.ProtocolClient;
import io.switchboard.protocol.spi.Transport;
import io.switchboard.protocol.spi.UnixSockets;
import io.switchboard.testing.TestCertificates;
import io.switchboard.testing.conformance.ConformanceComponent;
import io.switchboard.testing.conformance.ConformanceImpl;
import java.net.StandardProtocolFamily;
import java.net.UnixDomainSocketAddress;
import java.nio.channels.ServerSocketChannel;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.util.function.Function;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * tcp on the same host: the server's Unix domain socket (private, named in its endpoint, removed
 * on close) and the client's fallback to TCP whenever that socket cannot be used.
 */
class TcpUnixSocketTest {
    private final TcpProtocolProvider provider = new TcpProtocolProvider();
    private ProtocolClient client;

    @BeforeEach
    void linuxOnly() {
        // without epoll there is no Unix socket to test; TcpUnixConformanceTest covers that case
        assumeTrue(Epoll.isAvailable(), "epoll (Linux) is not available");
        client = provider.newClient(ClientSettings.defaults());
    }

    @AfterEach
    void stop() {
        if (client != null) {
            client.close();
        }
    }

    @Test
    void theServerListensInAPrivateDirectoryNamedByItsEndpointAndRemovesItOnClose() throws Exception {
        Path socket;
        try (TcpServer server = (TcpServer) provider.newServer(ServerSettings.defaults())) {
            Endpoint at = server.export(ConformanceComponent.skeleton(new ConformanceImpl()));
            socket = server.unixSocket();
            assertNotNull(socket, "a server without TLS listens on a Unix socket on Linux");
            assertEquals(socket, UnixSockets.TCP.sameHostSocket(at.uri()), at.address());
            assertTrue(at.address().contains("host=" + UnixSockets.localHostId()), at.address());
            assertEquals("rwx------", PosixFilePermissions.toString(Files.getPosixFilePermissions(socket.getParent())));
            assertTrue(socket.toString().getBytes().length <= UnixSockets.MAX_PATH_BYTES);

            assertEquals(UnixSockets.VIA_UNIX, pingVia(at));
        }
        assertFalse(Files.exists(socket), "the socket is removed");
        assertFalse(Files.exists(socket.getParent()), "its directory is removed");
    }

    @Test
    void aSocketThatIsGoneMeansTcp(@TempDir Path dir) throws Exception {
        assertEquals(UnixSockets.VIA_TCP, withServer(at -> pointedAt(at, dir.resolve(UnixSockets.TCP.file()))));
    }

    @Test
    void aSocketThatRefusesMeansTcp(@TempDir Path dir) throws Exception {
        Path stale = dir.resolve(UnixSockets.TCP.file());   // in a private directory, as a server makes it
        Files.setPosixFilePermissions(dir, PosixFilePermissions.fromString("rwx------"));
        try (ServerSocketChannel s = ServerSocketChannel.open(StandardProtocolFamily.UNIX)) {
            s.bind(UnixDomainSocketAddress.of(stale));   // closed without removing its file: nobody listens there
        }
        assertTrue(UnixSockets.TCP.ours(stale), "only the refusal leaves the socket unused");
        assertEquals(UnixSockets.VIA_TCP, withServer(at -> pointedAt(at, stale)));
    }

    @Test
    void aSocketNotInAPrivateDirectoryIsNeverConnectedTo(@TempDir Path dir) throws Exception {
        Path open = Files.createDirectory(dir.resolve("open"));
        Files.setPosixFilePermissions(open, PosixFilePermissions.fromString("rwxr-xr-x"));
        Path elsewhere = open.resolve(UnixSockets.TCP.file());
        try (ServerSocketChannel s = ServerSocketChannel.open(StandardProtocolFamily.UNIX)) {
            s.bind(UnixDomainSocketAddress.of(elsewhere));
            s.configureBlocking(false);
            assertFalse(UnixSockets.TCP.ours(elsewhere));
            assertEquals(UnixSockets.VIA_TCP, withServer(at -> pointedAt(at, elsewhere)));
            assertNull(s.accept(), "an entry cannot send a client to some other socket on its host");
        }
    }

    /** The served endpoint with its socket's path replaced by {@code socket}. */
    private static Endpoint pointedAt(Endpoint at, Path socket) {
        return new Endpoint("tcp", at.address().replace(UnixSockets.TCP.sameHostSocket(at.uri()).toString(), socket.toString()));
    }

    @Test
    void aSocketOnAnotherHostMeansTcp() throws Exception {
        assertEquals(UnixSockets.VIA_TCP, withServer(at -> new Endpoint("tcp",
                at.address().replace("host=" + UnixSockets.localHostId(), "host=0123456789abcdef"))));
    }

    @Test
    void thePropertyTurnsUnixSocketsOff() throws Exception {
        System.setProperty(UnixSockets.TCP.property(), "false");
        try (TcpServer server = (TcpServer) provider.newServer(ServerSettings.defaults())) {
            Endpoint at = server.export(ConformanceComponent.skeleton(new ConformanceImpl()));
            assertNull(server.unixSocket());
            assertFalse(at.address().contains("?"), at.address());
            assertEquals(UnixSockets.VIA_TCP, pingVia(at));
        } finally {
            System.clearProperty(UnixSockets.TCP.property());
        }
    }

    @Test
    void aPathTooLongForASocketLeavesTheServerOnTcp(@TempDir Path dir) throws Exception {
        Path deep = Files.createDirectories(dir.resolve("d".repeat(100)));
        System.setProperty(UnixSockets.TCP.directoryProperty(), deep.toString());
        try (TcpServer server = (TcpServer) provider.newServer(ServerSettings.defaults())) {
            Endpoint at = server.export(ConformanceComponent.skeleton(new ConformanceImpl()));
            assertNull(server.unixSocket());
            assertEquals(UnixSockets.VIA_TCP, pingVia(at));
            try (var left = Files.list(deep)) {
                assertEquals(0, left.count(), "the private directory made for the socket is removed");
            }
        } finally {
            System.clearProperty(UnixSockets.TCP.directoryProperty());
        }
    }

    @Test
    void aTlsServerHasNoUnixSocket() {
        // its certificates, and the client's, are checked on every connection: only TCP carries TLS here
        try (TcpServer server = (TcpServer) provider.newServer(ServerSettings.defaults()
                .withTls(TestCertificates.get().server()))) {
            Endpoint at = server.export(ConformanceComponent.skeleton(new ConformanceImpl()));
            assertNull(server.unixSocket());
            assertFalse(at.address().contains("?"), at.address());
        }
    }

    @Test
    void aSocketPathHasAtMost107Bytes() {
        assertNotNull(UnixSockets.checkPath(Path.of("/" + "x".repeat(UnixSockets.MAX_PATH_BYTES))));
        assertNull(UnixSockets.checkPath(Path.of("/" + "x".repeat(UnixSockets.MAX_PATH_BYTES - 1))));
    }

    /** Serves, connects to the endpoint {@code rewrite} makes of the served one, pings, and says the way it went. */
    private String withServer(Function<Endpoint, Endpoint> rewrite) {
        try (TcpServer server = (TcpServer) provider.newServer(ServerSettings.defaults())) {
            Endpoint at = server.export(ConformanceComponent.skeleton(new ConformanceImpl()));
            return pingVia(rewrite.apply(at));
        }
    }

    private String pingVia(Endpoint at) {
        try (Transport t = client.connect(ConformanceComponent.DESCRIPTOR, at)) {
            ConformanceComponent.stub(t).ping();
            return t.via();
        }
    }
}
