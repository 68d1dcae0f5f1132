package io.switchboard.protocol.tcp;

import java.io.IOException;
import java.net.ConnectException;
import java.net.StandardProtocolFamily;
import java.net.UnixDomainSocketAddress;
import java.nio.channels.SocketChannel;
import java.nio.file.DirectoryStream;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.Path;
import java.nio.file.SecureDirectoryStream;
import java.nio.file.attribute.PosixFileAttributeView;
import java.nio.file.attribute.PosixFileAttributes;
import java.time.Duration;
import java.time.Instant;
import java.util.Iterator;
import java.util.Objects;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The socket directories of servers that died without closing (SIGKILL, a crash, a test JVM its
 * runner killed): each server removes its own when it closes, so without this a host that
 * restarts servers for months fills its tmp dir. A server removes them before it makes its own
 * (docs/tcp-wire.md, "Unix domain sockets on the same host"; the Python server keeps the same rule).
 *
 * <p>Only what is surely a dead server's goes: an entry of the parent named
 * {@link UnixSockets#DIRECTORY_PREFIX}{@code *} that is a directory as a server makes it
 * ({@link UnixSockets#isPrivateDirectory}), holding nothing or only a socket named
 * {@link UnixSockets#FILE} that refuses connections, the directory and the socket both modified
 * over {@link #GRACE} ago. Everything is read and removed through the directories' descriptors
 * ({@code openat}, {@code unlinkat}): no link is followed, and a directory swapped in after the
 * checks is not the one removed.
 */
final class StaleSocketDirectories {
    /**
     * How long a directory and its socket stay untouched after they change: a server makes its
     * directory, then binds its socket (which refuses until it listens), then listens, within
     * moments.
     */
    static final Duration GRACE = Duration.ofSeconds(60);
    /** The parent's entries read per start, at most, so that a huge tmp dir does not slow a start. */
    static final int MAX_ENTRIES_READ = 4096;
    /** The directories examined per start, at most (each costs a few system calls and a connect). */
    static final int MAX_EXAMINED = 256;

    private static final Logger LOG = LoggerFactory.getLogger(StaleSocketDirectories.class);
    private static final Path SOCKET = Path.of(UnixSockets.FILE);

    private StaleSocketDirectories() {
    }

    /** Removes the dead servers' socket directories in {@code parent}; never fails. */
    static void removeIn(Path parent) {
        Instant youngSince = Instant.now().minus(GRACE);
        int read = 0;
        int examined = 0;
        try (DirectoryStream<Path> entries = Files.newDirectoryStream(parent)) {
            if (!(entries instanceof SecureDirectoryStream<Path> secure)) {
                LOG.debug("tcp leaves stale socket directories in {}: no descriptor-relative file access", parent);
                return;
            }
            for (Iterator<Path> it = secure.iterator(); it.hasNext() && read < MAX_ENTRIES_READ
                    && examined < MAX_EXAMINED; read++) {
                Path name = it.next().getFileName();
                if (!name.toString().startsWith(UnixSockets.DIRECTORY_PREFIX)) {
                    continue;
                }
                examined++;
                try {
                    if (removeIfStale(secure, parent, name, youngSince)) {
                        LOG.debug("tcp removed the socket directory {} of a server gone", parent.resolve(name));
                    }
                } catch (IOException | RuntimeException e) {
                    LOG.debug("tcp leaves {}: {}", parent.resolve(name), e.toString());
                }
            }
        } catch (IOException | RuntimeException e) {
            LOG.debug("tcp leaves stale socket directories in {}: {}", parent, e.toString());
        }
    }

    /** Removes the entry {@code name} of {@code parent} if it is a dead server's directory; says whether it did. */
    private static boolean removeIfStale(SecureDirectoryStream<Path> parent, Path parentPath, Path name,
            Instant youngSince) throws IOException {
        PosixFileAttributes checked = attributes(parent, name);
        if (!UnixSockets.isPrivateDirectory(checked) || modifiedSince(checked, youngSince)) {
            return false;
        }
        try (SecureDirectoryStream<Path> dir = parent.newDirectoryStream(name, LinkOption.NOFOLLOW_LINKS)) {
            PosixFileAttributes opened = dir.getFileAttributeView(PosixFileAttributeView.class).readAttributes();
            if (!Objects.equals(opened.fileKey(), checked.fileKey())) {
                return false;   // replaced since it was checked
            }
            Iterator<Path> entries = dir.iterator();
            if (entries.hasNext()) {
                boolean onlyTheSocket = SOCKET.equals(entries.next().getFileName()) && !entries.hasNext();
                if (!onlyTheSocket) {
                    return false;
                }
                PosixFileAttributes socket = attributes(dir, SOCKET);
                if (!UnixSockets.isSocket(socket) || modifiedSince(socket, youngSince)
                        || !nobodyListens(parentPath.resolve(name).resolve(SOCKET))) {
                    return false;
                }
                dir.deleteFile(SOCKET);
            }
        }
        parent.deleteDirectory(name);   // unlinkat: removes an empty directory, never a link's target
        return true;
    }

    private static PosixFileAttributes attributes(SecureDirectoryStream<Path> dir, Path name) throws IOException {
        return dir.getFileAttributeView(name, PosixFileAttributeView.class, LinkOption.NOFOLLOW_LINKS).readAttributes();
    }

    private static boolean modifiedSince(PosixFileAttributes file, Instant since) {
        return file.lastModifiedTime().toInstant().isAfter(since);
    }

    /**
     * Whether connecting to {@code socket} is refused (ECONNREFUSED): nobody listens there. A
     * connection that is accepted, or any other answer, means leave it. The connect does not
     * block: a Unix socket's answers at once, a full backlog included.
     */
    private static boolean nobodyListens(Path socket) {
        try (SocketChannel probe = SocketChannel.open(StandardProtocolFamily.UNIX)) {
            probe.configureBlocking(false);
            probe.connect(UnixDomainSocketAddress.of(socket));
            return false;
        } catch (ConnectException e) {
            return true;
        } catch (IOException | RuntimeException e) {
            return false;
        }
    }
}
