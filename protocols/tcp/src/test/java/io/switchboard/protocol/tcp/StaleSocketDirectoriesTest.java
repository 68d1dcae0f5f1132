package io.switchboard.protocol.tcp;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import io.netty.channel.epoll.Epoll;
import io.switchboard.protocol.ClientSettings;
import io.switchboard.protocol.Endpoint;
import io.switchboard.protocol.ServerSettings;
import io.switchboard.protocol.spi.ProtocolClient;
import io.switchboard.protocol.spi.StaleSocketDirectories;
import io.switchboard.protocol.spi.Transport;
import io.switchboard.protocol.spi.UnixSockets;
import io.switchboard.testing.conformance.ConformanceComponent;
import io.switchboard.testing.conformance.ConformanceImpl;
import java.io.IOException;
import java.net.StandardProtocolFamily;
import java.net.UnixDomainSocketAddress;
import java.nio.channels.ServerSocketChannel;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.Path;
import java.nio.file.attribute.FileTime;
import java.nio.file.attribute.PosixFilePermissions;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * A starting server removes the socket directories of servers that were killed, and nothing else:
 * not a live server's, not a young one's, not anything a server would not have made. Each case
 * that keeps a directory starts its server beside a killed server's directory too, which must go:
 * the sweep ran and passed over the kept one.
 */
class StaleSocketDirectoriesTest {
    private static final FileTime LONG_AGO = FileTime.from(Instant.now().minus(StaleSocketDirectories.GRACE.multipliedBy(10)));

    private final TcpProtocolProvider provider = new TcpProtocolProvider();
    private final List<TcpServer> servers = new ArrayList<>();
    @TempDir
    Path root;
    private Path parent;

    @BeforeEach
    void aParentOfItsOwn() throws IOException {
        assumeTrue(Epoll.isAvailable(), "epoll (Linux) is not available: no Unix sockets");
        parent = Files.createDirectory(root.resolve("parent"));
        System.setProperty(UnixSockets.TCP.directoryProperty(), parent.toString());
    }

    @AfterEach
    void stop() {
        servers.forEach(TcpServer::close);
        System.clearProperty(UnixSockets.TCP.directoryProperty());
    }

    @Test
    void aKilledServersDirectoryIsRemovedWhenAServerStarts() throws Exception {
        Path killed = killedServersDirectory(parent.resolve("sb-tcp-killed"));
        Path empty = Files.createDirectory(parent.resolve("sb-tcp-empty"), PosixFilePermissions.asFileAttribute(
                PosixFilePermissions.fromString("rwx------")));
        Files.setLastModifiedTime(empty, LONG_AGO);
        Path socket = UnixSockets.TCP.sameHostSocket(start().uri());
        assertNotNull(socket, "the new server listens on its socket");
        assertFalse(Files.exists(killed, LinkOption.NOFOLLOW_LINKS), "a killed server's directory goes");
        assertFalse(Files.exists(empty, LinkOption.NOFOLLOW_LINKS), "one killed before it bound its socket too");
        assertEquals(parent, socket.getParent().getParent());
    }

    @Test
    void aLiveServersDirectoryIsKeptAndItStillServes() throws Exception {
        Endpoint at = start();
        Path socket = UnixSockets.TCP.sameHostSocket(at.uri());
        longAgo(socket, socket.getParent());

        keptWhileAKilledServersGoes(socket.getParent());
        ProtocolClient client = provider.newClient(ClientSettings.defaults());
        try (Transport t = client.connect(ConformanceComponent.DESCRIPTOR, at)) {
            ConformanceComponent.stub(t).ping();
            assertEquals(UnixSockets.VIA_UNIX, t.via(), "the live server still takes calls on its socket");
        } finally {
            client.close();
        }
    }

    @Test
    void aDirectoryModifiedWithinTheGracePeriodIsKept() throws Exception {
        Path young = killedServersDirectory(parent.resolve("sb-tcp-young"));
        Files.setLastModifiedTime(young, FileTime.from(Instant.now()));   // its server may be about to listen
        keptWhileAKilledServersGoes(young);
    }

    @Test
    void aSocketModifiedWithinTheGracePeriodIsKept() throws Exception {
        Path young = killedServersDirectory(parent.resolve("sb-tcp-young"));
        Files.setLastModifiedTime(young.resolve(UnixSockets.TCP.file()), FileTime.from(Instant.now()));
        keptWhileAKilledServersGoes(young);
    }

    @Test
    void aDirectoryHoldingAnotherFileIsKept() throws Exception {
        Path more = killedServersDirectory(parent.resolve("sb-tcp-more"));
        Files.writeString(more.resolve("notes"), "not a server's");
        longAgo(more.resolve("notes"), more);
        keptWhileAKilledServersGoes(more);
    }

    @Test
    void aDirectoryHoldingAPlainFileNamedLikeTheSocketIsKept() throws Exception {
        Path plain = Files.createDirectory(parent.resolve("sb-tcp-plain"));
        Files.setPosixFilePermissions(plain, PosixFilePermissions.fromString("rwx------"));
        Files.writeString(plain.resolve(UnixSockets.TCP.file()), "not a socket");
        longAgo(plain.resolve(UnixSockets.TCP.file()), plain);
        keptWhileAKilledServersGoes(plain);
    }

    @Test
    void aDirectoryOthersMayEnterIsKept() throws Exception {
        Path open = killedServersDirectory(parent.resolve("sb-tcp-open"));
        Files.setPosixFilePermissions(open, PosixFilePermissions.fromString("rwxr-x---"));
        longAgo(open);
        keptWhileAKilledServersGoes(open);
    }

    @Test
    void anotherUsersDirectoryIsKept() throws Exception {
        assumeTrue("root".equals(System.getProperty("user.name")), "only root can give a directory away");
        Path theirs = killedServersDirectory(parent.resolve("sb-tcp-theirs"));
        Files.setOwner(theirs, theirs.getFileSystem().getUserPrincipalLookupService().lookupPrincipalByName("nobody"));
        longAgo(theirs);
        keptWhileAKilledServersGoes(theirs);
    }

    @Test
    void aDirectoryNotNamedAsAServerNamesItsIsKept() throws Exception {
        keptWhileAKilledServersGoes(killedServersDirectory(parent.resolve("sb-grpc-killed")));
    }

    @Test
    void aLinkNamedAsAServersDirectoryIsKeptAndSoIsItsTarget() throws Exception {
        Path target = killedServersDirectory(parent.resolve("target"));
        Path link = Files.createSymbolicLink(parent.resolve("sb-tcp-link"), target);
        keptWhileAKilledServersGoes(link);
        assertTrue(Files.exists(target.resolve(UnixSockets.TCP.file()), LinkOption.NOFOLLOW_LINKS));
    }

    @Test
    void aLinkToADirectoryElsewhereRemovesNothingThere() throws Exception {
        Path elsewhere = killedServersDirectory(root.resolve("elsewhere"));
        Files.createSymbolicLink(parent.resolve("sb-tcp-evil"), elsewhere);
        keptWhileAKilledServersGoes(parent.resolve("sb-tcp-evil"));
        assertTrue(Files.exists(elsewhere.resolve(UnixSockets.TCP.file()), LinkOption.NOFOLLOW_LINKS),
                "the dead socket the link leads to stays");
        assertTrue(Files.isDirectory(elsewhere, LinkOption.NOFOLLOW_LINKS));
    }

    /** Starts a server beside {@code kept} and a killed server's directory: that one goes, {@code kept} stays as it was. */
    private void keptWhileAKilledServersGoes(Path kept) throws IOException {
        Path killed = killedServersDirectory(parent.resolve("sb-tcp-killed"));
        List<Path> before = contents(kept);
        start();
        assertFalse(Files.exists(killed, LinkOption.NOFOLLOW_LINKS), "the killed server's directory goes");
        assertTrue(Files.exists(kept, LinkOption.NOFOLLOW_LINKS), kept + " stays");
        assertEquals(before, contents(kept), "with all it holds");
    }

    private static List<Path> contents(Path dir) throws IOException {
        if (Files.isSymbolicLink(dir)) {
            return List.of();
        }
        try (var entries = Files.list(dir)) {
            return entries.sorted().toList();
        }
    }

    /** A directory as a killed server leaves it: 0700, its socket bound and closed (the file stays), both long unmodified. */
    private static Path killedServersDirectory(Path dir) throws IOException {
        Files.createDirectory(dir, PosixFilePermissions.asFileAttribute(PosixFilePermissions.fromString("rwx------")));
        Path socket = dir.resolve(UnixSockets.TCP.file());
        try (ServerSocketChannel s = ServerSocketChannel.open(StandardProtocolFamily.UNIX)) {
            s.bind(UnixDomainSocketAddress.of(socket));
        }
        longAgo(socket, dir);
        return dir;
    }

    private static void longAgo(Path... files) throws IOException {
        for (Path file : files) {
            Files.setLastModifiedTime(file, LONG_AGO);
        }
    }

    /** A server serving the conformance component (it listens from its first export); its endpoint. */
    private Endpoint start() {
        TcpServer server = (TcpServer) provider.newServer(ServerSettings.defaults());
        servers.add(server);
        return server.export(ConformanceComponent.skeleton(new ConformanceImpl()));
    }
}
