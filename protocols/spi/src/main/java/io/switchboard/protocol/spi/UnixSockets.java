package io.switchboard.protocol.spi;

import io.switchboard.protocol.Endpoint;
import java.io.IOException;
import java.net.InetAddress;
import java.net.URI;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFileAttributes;
import java.nio.file.attribute.PosixFilePermission;
import java.nio.file.attribute.PosixFilePermissions;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.HexFormat;
import java.util.Set;

/**
 * A protocol's Unix domain sockets on the same host: where a server's socket lives, how its
 * endpoint says so, and how a client tells that it runs on that host (docs/tcp-wire.md, "Unix
 * domain sockets on the same host"). One instance per protocol ({@link #TCP}, {@link #GRPC}).
 *
 * <p>A server without TLS listens on a socket in a directory of its own, readable only by its OS
 * user (0700), made under {@link #directoryProperty} (default {@code java.io.tmpdir}), and
 * removed when it closes. Its endpoint address carries the socket's path and the host's identity
 * as query parameters, {@code tcp://HOST:PORT/Echo?unix=/tmp/sb-tcp-123/tcp.sock&host=3f0c...}:
 * a reader that does not know them sees the same host and port as before.
 *
 * <pre>{@code
 * Path socket = UnixSockets.TCP.privateDirectory().resolve(UnixSockets.TCP.file());
 * String address = "tcp://" + host + ":" + port + "/Echo?" + UnixSockets.query(socket);
 * Path same = UnixSockets.TCP.sameHostSocket(URI.create(address));   // null on another host: TCP
 * }</pre>
 */
public final class UnixSockets {
    /**
     * The send buffer each side of a Unix socket connection asks for. A Unix stream socket holds
     * only what its sender's buffer does (the kernel's default is 208 KiB), where TCP on loopback
     * grows its windows to megabytes: with the default, a 1 MB message crosses in about five rounds
     * of fill, wake and drain (docs/tcp-wire.md has the figures). The kernel caps it at
     * {@code net.core.wmem_max}.
     */
    public static final int SEND_BUFFER_BYTES = 1 << 20;

    /** A socket path's longest form in bytes: {@code sun_path} holds 108, its terminating NUL included. */
    public static final int MAX_PATH_BYTES = 107;
    /** The endpoint's query parameters: the socket's path, and the identity of the host it is on. */
    public static final String PATH_PARAMETER = "unix";
    public static final String HOST_PARAMETER = "host";
    /** The call record's word for a call that went over a Unix socket. */
    public static final String VIA_UNIX = "unix";
    public static final String VIA_TCP = "tcp";

    /** tcp's sockets: {@code sb-tcp-*}{@code /tcp.sock}, {@code -Dswitchboard.tcp.unix}, {@code -Dswitchboard.tcp.unixDirectory}. */
    public static final UnixSockets TCP = new UnixSockets("tcp");
    /** gRPC's sockets: {@code sb-grpc-*}{@code /grpc.sock}, {@code -Dswitchboard.grpc.unix}, {@code -Dswitchboard.grpc.unixDirectory}. */
    public static final UnixSockets GRPC = new UnixSockets("grpc");

    private static final Set<PosixFilePermission> PRIVATE = PosixFilePermissions.fromString("rwx------");
    private static final String HOST_ID = hostId();

    private final String file;
    private final String directoryPrefix;
    private final String property;
    private final String directoryProperty;

    private UnixSockets(String protocol) {
        this.file = protocol + ".sock";
        this.directoryPrefix = "sb-" + protocol + "-";
        this.property = "switchboard." + protocol + ".unix";
        this.directoryProperty = "switchboard." + protocol + ".unixDirectory";
    }

    /** The socket's name in its directory. */
    public String file() {
        return file;
    }

    /** How the name of a server's socket directory begins; a random part follows. */
    public String directoryPrefix() {
        return directoryPrefix;
    }

    /** {@code -D<property>=false} turns these sockets off: servers do not listen, clients do not connect. */
    public String property() {
        return property;
    }

    /** The directory under which a server makes its private socket directory; default {@code java.io.tmpdir}. */
    public String directoryProperty() {
        return directoryProperty;
    }

    public boolean enabled() {
        return !"false".equalsIgnoreCase(System.getProperty(property, "true").trim());
    }

    /**
     * This host as its endpoints name it: the first 16 hex digits of the SHA-256 of the machine id,
     * the boot id and the host name. Containers of one image may share a machine id and all share
     * the kernel's boot id; their host names tell them apart. A client that computes another
     * value connects over TCP.
     */
    public static String hostId() {
        StringBuilder what = new StringBuilder();
        what.append(read("/etc/machine-id")).append('\n').append(read("/proc/sys/kernel/random/boot_id")).append('\n');
        String hostName = read("/proc/sys/kernel/hostname");   // the kernel's, without a name lookup
        if (hostName.isEmpty()) {
            try {
                hostName = InetAddress.getLocalHost().getHostName();
            } catch (IOException e) {
                hostName = System.getenv().getOrDefault("HOSTNAME", "");
            }
        }
        what.append(hostName);
        try {
            byte[] digest = MessageDigest.getInstance("SHA-256").digest(what.toString().getBytes(StandardCharsets.UTF_8));
            return HexFormat.of().formatHex(digest, 0, 8);
        } catch (NoSuchAlgorithmException e) {
            throw new IllegalStateException("no SHA-256 in this JVM", e);
        }
    }

    public static String localHostId() {
        return HOST_ID;
    }

    private static String read(String file) {
        try {
            return Files.readString(Path.of(file), StandardCharsets.US_ASCII).trim();
        } catch (IOException | RuntimeException e) {
            return "";
        }
    }

    /** Why {@code socket} cannot be a socket's path, or null when it can. */
    public static String checkPath(Path socket) {
        int bytes = socket.toString().getBytes(StandardCharsets.UTF_8).length;
        return bytes > MAX_PATH_BYTES ? "the path " + socket + " has " + bytes + " bytes, over the "
                + MAX_PATH_BYTES + " a Unix socket's path may have" : null;
    }

    /**
     * A new directory that only this OS user may enter (0700), for one server's socket. Killed
     * servers' directories beside it go first ({@link StaleSocketDirectories}).
     */
    public Path privateDirectory() throws IOException {
        Path parent = Path.of(System.getProperty(directoryProperty, System.getProperty("java.io.tmpdir")));
        StaleSocketDirectories.removeIn(parent, this);
        return Files.createTempDirectory(parent, directoryPrefix, PosixFilePermissions.asFileAttribute(PRIVATE));
    }

    /**
     * The path for a new server's socket, in a new private directory ({@link #privateDirectory}):
     * both marked to go when the JVM exits, should the server not remove them
     * ({@link #removeSocketDirectory}). Throws, leaving nothing behind, when the path is too long
     * for a socket.
     */
    public Path newSocketPath() throws IOException {
        Path directory = privateDirectory();
        Path path = directory.resolve(file);
        String why = checkPath(path);
        if (why != null) {
            removeSocketDirectory(directory);
            throw new IOException(why + "; set -D" + directoryProperty + " to a shorter directory");
        }
        directory.toFile().deleteOnExit();
        path.toFile().deleteOnExit();   // deleted before its directory: the last registered goes first
        return path;
    }

    /** Removes a server's socket directory (null: nothing), the socket in it first. */
    public void removeSocketDirectory(Path directory) throws IOException {
        if (directory != null) {
            Files.deleteIfExists(directory.resolve(file));
            Files.deleteIfExists(directory);
        }
    }

    /** {@code served} without the query that names its server's Unix socket: its clients connect over TCP. */
    public static Endpoint overTcp(Endpoint served) {
        String address = served.address();
        int query = address.indexOf('?');
        return query < 0 ? served : new Endpoint(served.protocol(), address.substring(0, query));
    }

    /** The query an endpoint served on {@code socket} as well carries. */
    public static String query(Path socket) {
        return PATH_PARAMETER + "=" + encode(socket.toString()) + "&" + HOST_PARAMETER + "=" + HOST_ID;
    }

    /**
     * The Unix socket a client on this host reaches the endpoint's server at: the endpoint names
     * one, names this host, and the socket exists as a server makes it ({@link #ours}). Null
     * otherwise (then: TCP).
     */
    public Path sameHostSocket(URI endpoint) {
        String query = endpoint.getRawQuery();
        if (query == null || !enabled()) {
            return null;
        }
        String path = null;
        String host = null;
        for (String pair : query.split("&")) {
            int eq = pair.indexOf('=');
            if (eq < 0) {
                continue;
            }
            String key = pair.substring(0, eq);
            String value = decode(pair.substring(eq + 1));
            if (PATH_PARAMETER.equals(key)) {
                path = value;
            } else if (HOST_PARAMETER.equals(key)) {
                host = value;
            }
        }
        if (path == null || !HOST_ID.equals(host)) {
            return null;
        }
        Path socket;
        try {
            socket = Path.of(path);
        } catch (java.nio.file.InvalidPathException e) {
            return null;
        }
        return socket.isAbsolute() && checkPath(socket) == null && ours(socket) ? socket : null;
    }

    /**
     * Whether {@code socket} is a server's socket as this protocol's server makes it: a socket file
     * named {@link #file} in a directory of this OS user's that only that user may enter. An entry
     * cannot point a client at some other socket on its host (a daemon's, another user's).
     */
    public boolean ours(Path socket) {
        try {
            return file.equals(String.valueOf(socket.getFileName()))
                    && isSocket(Files.readAttributes(socket, PosixFileAttributes.class, LinkOption.NOFOLLOW_LINKS))
                    && isPrivateDirectory(Files.readAttributes(socket.getParent(), PosixFileAttributes.class,
                            LinkOption.NOFOLLOW_LINKS));
        } catch (IOException | UnsupportedOperationException | SecurityException e) {
            return false;
        }
    }

    /**
     * Whether a file, its attributes read without following links, can be a server's socket: as
     * far as these attributes tell, not a regular file, a directory or a link.
     */
    public static boolean isSocket(PosixFileAttributes file) {
        return file.isOther();
    }

    /**
     * Whether a directory, its attributes read without following links, is one as
     * {@link #privateDirectory} makes it: a directory (not a link to one) of this OS user's that
     * only that user may enter.
     */
    public static boolean isPrivateDirectory(PosixFileAttributes dir) {
        return dir.isDirectory() && dir.permissions().equals(PRIVATE)
                && dir.owner().getName().equals(System.getProperty("user.name"));
    }

    /** Percent-encodes all but unreserved characters and {@code /}. */
    private static String encode(String s) {
        StringBuilder out = new StringBuilder();
        for (byte b : s.getBytes(StandardCharsets.UTF_8)) {
            char c = (char) (b & 0xff);
            if ((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || "-._~/".indexOf(c) >= 0) {
                out.append(c);
            } else {
                out.append('%').append(HexFormat.of().withUpperCase().toHexDigits(b));
            }
        }
        return out.toString();
    }

    private static String decode(String s) {
        try {
            return java.net.URLDecoder.decode(s.replace("+", "%2B"), StandardCharsets.UTF_8);
        } catch (IllegalArgumentException e) {
            return null;
        }
    }
}
