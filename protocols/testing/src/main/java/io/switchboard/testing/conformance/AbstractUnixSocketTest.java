package io.switchboard.testing.conformance;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import io.switchboard.protocol.ClientSettings;
import io.switchboard.protocol.Endpoint;
import io.switchboard.protocol.ServerSettings;
import io.switchboard.protocol.spi.ProtocolClient;
import io.switchboard.protocol.spi.ProtocolProvider;
import io.switchboard.protocol.spi.ProtocolServer;
import io.switchboard.protocol.spi.Protocols;
import io.switchboard.protocol.spi.Transport;
import io.switchboard.protocol.spi.UnixSockets;
import io.switchboard.testing.TestCertificates;
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
 * A protocol's Unix socket on the same host ({@link UnixSockets}): where its server makes the
 * socket and removes it, what the endpoint says, and when a client takes it or goes over TCP.
 * A protocol's test names the protocol, its sockets and how to ask its server for its socket.
 *
 * <pre>{@code
 * class TcpUnixSocketTest extends AbstractUnixSocketTest {
 *     protected String protocolName() { return "tcp"; }
 *     protected UnixSockets sockets() { return UnixSockets.TCP; }
 *     protected boolean epollAvailable() { return Epoll.isAvailable(); }
 *     protected Path unixSocketOf(ProtocolServer server) { return ((TcpServer) server).unixSocket(); }
 * }
 * }</pre>
 */
public abstract class AbstractUnixSocketTest {
    protected ProtocolProvider provider;
    protected ProtocolClient client;

    protected abstract String protocolName();

    protected abstract UnixSockets sockets();

    /** Whether Netty's epoll transport, as the protocol uses it, is there (Linux): without it no socket. */
    protected abstract boolean epollAvailable();

    /** The Unix socket {@code server} listens on, or null. */
    protected abstract Path unixSocketOf(ProtocolServer server);

    @BeforeEach
    void linuxOnly() {
        // without epoll there is no Unix socket to test; the protocol's Unix conformance test covers that case
        assumeTrue(epollAvailable(), "epoll (Linux) is not available");
        provider = Protocols.get(protocolName());
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
        try (ProtocolServer server = provider.newServer(ServerSettings.defaults())) {
            Endpoint at = server.export(ConformanceComponent.skeleton(new ConformanceImpl()));
            socket = unixSocketOf(server);
            assertNotNull(socket, "a server without TLS listens on a Unix socket on Linux");
            assertEquals(socket, sockets().sameHostSocket(at.uri()), at.address());
            assertTrue(at.address().contains("host=" + UnixSockets.localHostId()), at.address());
            assertEquals(sockets().file(), socket.getFileName().toString());
            assertTrue(socket.getParent().getFileName().toString().startsWith(sockets().directoryPrefix()), socket.toString());
            assertEquals("rwx------", PosixFilePermissions.toString(Files.getPosixFilePermissions(socket.getParent())));
            assertTrue(socket.toString().getBytes().length <= UnixSockets.MAX_PATH_BYTES);

            assertEquals(UnixSockets.VIA_UNIX, pingVia(at));
        }
        assertFalse(Files.exists(socket), "the socket is removed");
        assertFalse(Files.exists(socket.getParent()), "its directory is removed");
    }

    @Test
    void aSocketThatIsGoneMeansTcp(@TempDir Path dir) throws Exception {
        assertEquals(UnixSockets.VIA_TCP, withServer(at -> pointedAt(at, dir.resolve(sockets().file()))));
    }

    @Test
    void aSocketThatRefusesMeansTcp(@TempDir Path dir) throws Exception {
        Path stale = dir.resolve(sockets().file());   // in a private directory, as a server makes it
        Files.setPosixFilePermissions(dir, PosixFilePermissions.fromString("rwx------"));
        try (ServerSocketChannel s = ServerSocketChannel.open(StandardProtocolFamily.UNIX)) {
            s.bind(UnixDomainSocketAddress.of(stale));   // closed without removing its file: nobody listens there
        }
        assertTrue(sockets().ours(stale), "only the refusal leaves the socket unused");
        assertEquals(UnixSockets.VIA_TCP, withServer(at -> pointedAt(at, stale)));
    }

    @Test
    void aSocketNotInAPrivateDirectoryIsNeverConnectedTo(@TempDir Path dir) throws Exception {
        Path open = Files.createDirectory(dir.resolve("open"));
        Files.setPosixFilePermissions(open, PosixFilePermissions.fromString("rwxr-xr-x"));
        Path elsewhere = open.resolve(sockets().file());
        try (ServerSocketChannel s = ServerSocketChannel.open(StandardProtocolFamily.UNIX)) {
            s.bind(UnixDomainSocketAddress.of(elsewhere));
            s.configureBlocking(false);
            assertFalse(sockets().ours(elsewhere));
            assertEquals(UnixSockets.VIA_TCP, withServer(at -> pointedAt(at, elsewhere)));
            assertNull(s.accept(), "an entry cannot send a client to some other socket on its host");
        }
    }

    /** The served endpoint with its socket's path replaced by {@code socket}. */
    private Endpoint pointedAt(Endpoint at, Path socket) {
        return new Endpoint(protocolName(), at.address().replace(sockets().sameHostSocket(at.uri()).toString(), socket.toString()));
    }

    @Test
    void aSocketOnAnotherHostMeansTcp() throws Exception {
        assertEquals(UnixSockets.VIA_TCP, withServer(at -> new Endpoint(protocolName(),
                at.address().replace("host=" + UnixSockets.localHostId(), "host=0123456789abcdef"))));
    }

    @Test
    void thePropertyTurnsUnixSocketsOff() throws Exception {
        System.setProperty(sockets().property(), "false");
        try (ProtocolServer server = provider.newServer(ServerSettings.defaults())) {
            Endpoint at = server.export(ConformanceComponent.skeleton(new ConformanceImpl()));
            assertNull(unixSocketOf(server));
            assertFalse(at.address().contains("?"), at.address());
            assertEquals(UnixSockets.VIA_TCP, pingVia(at));
        } finally {
            System.clearProperty(sockets().property());
        }
    }

    @Test
    void aPathTooLongForASocketLeavesTheServerOnTcp(@TempDir Path dir) throws Exception {
        Path deep = Files.createDirectories(dir.resolve("d".repeat(100)));
        System.setProperty(sockets().directoryProperty(), deep.toString());
        try (ProtocolServer server = provider.newServer(ServerSettings.defaults())) {
            Endpoint at = server.export(ConformanceComponent.skeleton(new ConformanceImpl()));
            assertNull(unixSocketOf(server));
            assertEquals(UnixSockets.VIA_TCP, pingVia(at));
            try (var left = Files.list(deep)) {
                assertEquals(0, left.count(), "the private directory made for the socket is removed");
            }
        } finally {
            System.clearProperty(sockets().directoryProperty());
        }
    }

    @Test
    void aTlsServerHasNoUnixSocket() {
        // its certificates, and the client's, are checked on every connection: only TCP carries TLS here
        try (ProtocolServer server = provider.newServer(ServerSettings.defaults().withTls(TestCertificates.get().server()))) {
            Endpoint at = server.export(ConformanceComponent.skeleton(new ConformanceImpl()));
            assertNull(unixSocketOf(server));
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
        try (ProtocolServer server = provider.newServer(ServerSettings.defaults())) {
            Endpoint at = server.export(ConformanceComponent.skeleton(new ConformanceImpl()));
            return pingVia(rewrite.apply(at));
        }
    }

    /** Connects to {@code at}, pings, and says the way the call went. */
    protected String pingVia(Endpoint at) {
        try (Transport t = client.connect(ConformanceComponent.DESCRIPTOR, at)) {
            ConformanceComponent.stub(t).ping();
            return t.via();
        }
    }
}
