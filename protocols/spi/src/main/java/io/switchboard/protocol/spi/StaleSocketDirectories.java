package io.switchboard.protocol.spi;

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
 * {@link UnixSockets#directoryPrefix}{@code *} that is a directory as a server makes it
 * ({@link UnixSockets#isPrivateDirectory}), holding nothing or only a socket named
 * {@link UnixSockets#file} that refuses connections, the directory and the socket both modified
 * over {@link #GRACE} ago. Everything is read and removed through the directories' descriptors
 * ({@code openat}, {@code unlinkat}): no link is followed, and a directory swapped in after the
 * checks is not the one removed.
 */
public final class StaleSocketDirectories {
    /**
     * How long a directory and its socket stay untouched after they change: a server makes its
     * directory, then binds its socket (which refuses until it listens), then listens, within
     * moments.
     */
    public static final Duration GRACE = Duration.ofSeconds(60);
    /** The parent's entries read per start, at most, so that a huge tmp dir does not slow a start. */
    public static final int MAX_ENTRIES_READ = 4096;
    /** The directories examined per start, at most (each costs a few system calls and a connect). */
    public static final int MAX_EXAMINED = 256;

    private static final Logger LOG = LoggerFactory.getLogger(StaleSocketDirectories.class);

    private StaleSocketDirectories() {
    }

    /** Removes the dead servers' socket directories of {@code kind} in {@code parent}; never fails. */
    public static void removeIn(Path parent, UnixSockets kind) {
        Instant youngSince = Instant.now().minus(GRACE);
        int read = 0;
        int examined = 0;
        try (DirectoryStream<Path> entries = Files.newDirectoryStream(parent)) {
            if (!(entries instanceof SecureDirectoryStream<Path> secure)) {
                LOG.debug("{} leaves stale socket directories in {}: no descriptor-relative file access", kind.directoryPrefix(), parent);
                return;
            }
            for (Iterator<Path> it = secure.iterator(); it.hasNext() && read < MAX_ENTRIES_READ
                    && examined < MAX_EXAMINED; read++) {
                Path name = it.next().getFileName();
                if (!name.toString().startsWith(kind.directoryPrefix())) {
                    continue;
                }
                examined++;
                try {
                    if (removeIfStale(secure, parent, name, Path.of(kind.file()), youngSince)) {
                        LOG.debug("removed the socket directory {} of a server gone", parent.resolve(name));
                    }
                } catch (IOException | RuntimeException e) {
                    LOG.debug("left {}: {}", parent.resolve(name), e.toString());
                }
            }
        } catch (IOException | RuntimeException e) {
            LOG.debug("{} leaves stale socket directories in {}: {}", kind.directoryPrefix(), parent, e.toString());
        }
    }

    /** Removes the entry {@code name} of {@code parent} if it is a dead server's directory; says whether it did. */
    private static boolean removeIfStale(SecureDirectoryStream<Path> parent, Path parentPath, Path name, Path socketName,
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
                boolean onlyTheSocket = socketName.equals(entries.next().getFileName()) && !entries.hasNext();
                if (!onlyTheSocket) {
                    return false;
                }
                PosixFileAttributes socket = attributes(dir, socketName);
                if (!UnixSockets.isSocket(socket) || modifiedSince(socket, youngSince)
                        || !nobodyListens(parentPath.resolve(name).resolve(socketName))) {
                    return false;
                }
                dir.deleteFile(socketName);
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
