package io.switchboard.protocol.tcp;

import io.switchboard.idl.runtime.ServiceDescriptor;
import io.switchboard.protocol.ClientSettings;
import io.switchboard.protocol.DaemonThreads;
import io.switchboard.protocol.Endpoint;
import io.switchboard.protocol.TransportException;
import io.switchboard.protocol.spi.Endpoints;
import io.switchboard.protocol.spi.ProtocolClient;
import io.switchboard.protocol.spi.Transport;
import io.switchboard.protocol.spi.UnixSockets;
import java.io.IOException;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.net.URI;
import java.nio.file.Path;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.Executor;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import javax.net.ssl.SSLSocket;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The client side of tcp: one connection per server address and scheme, shared by every transport
 * to that server (calls are multiplexed on it by correlation id), made on first use by the calling
 * thread, and again after it closed or sat unused for {@link #MAX_IDLE_NANOS} (a server closes
 * connections idle for a minute by default: a request written into one it is closing would be
 * lost as "may have run"). Over TLS for a {@code tcps://} endpoint; over the server's Unix domain
 * socket when its endpoint names one on this host ({@link UnixSockets}), else, or when that socket
 * refuses, over TCP. See {@link ClientConnection}
 * for how calls use it without a thread of their own.
 */
final class TcpClient implements ProtocolClient {
    private static final Logger LOG = LoggerFactory.getLogger(TcpClient.class);
    /** A connection unused this long is replaced rather than written to: half a server's default idle time. */
    static final long MAX_IDLE_NANOS = TimeUnit.SECONDS.toNanos(30);

    private final ClientSettings settings;
    private final TcpLimits limits;
    private final Map<String, ClientConnection> connections = new ConcurrentHashMap<>();
    private final Map<String, Object> opening = new ConcurrentHashMap<>();
    /** Read the answers of non-blocking calls: the settings' executor (the caller's), else a pool of our own. */
    private final Executor readers;
    private final ExecutorService ownReaders;
    private volatile boolean closed;

    TcpClient(ClientSettings settings, TcpLimits limits) {
        this.settings = settings;
        this.limits = limits;
        this.ownReaders = settings.executor() != null ? null : Executors.newCachedThreadPool(DaemonThreads.named("tcp-client-reader"));
        this.readers = settings.executor() != null ? settings.executor() : ownReaders;
    }

    @Override
    public String protocol() {
        return TcpProtocolProvider.NAME;
    }

    ClientSettings settings() {
        return settings;
    }

    TcpLimits limits() {
        return limits;
    }

    Executor readers() {
        return readers;
    }

    @Override
    public Transport connect(ServiceDescriptor descriptor, Endpoint endpoint) {
        if (!TcpProtocolProvider.NAME.equals(endpoint.protocol())) {
            throw new IllegalArgumentException("not a tcp endpoint: " + endpoint);
        }
        if (!TcpTls.isEndpoint(endpoint.uri())) {
            throw new IllegalArgumentException("a tcp endpoint looks like tcp://HOST:PORT/Component (tcps:// with TLS), not "
                    + endpoint.address());
        }
        return new TcpTransport(this, descriptor, endpoint);
    }

    /**
     * The open connection to the endpoint's server, or a new one, connected by this thread.
     *
     * @throws TransportException (not delivered) when no connection can be made
     */
    ClientConnection connection(URI uri) {
        return connection(uri, key(uri));
    }

    /** {@link #connection(URI)} with the endpoint's {@link #key} worked out once by its transport. */
    ClientConnection connection(URI uri, String key) {
        ClientConnection c = connections.get(key);
        if (c != null && c.usable(MAX_IDLE_NANOS)) {
            return c;
        }
        String host = host(uri);
        synchronized (opening.computeIfAbsent(key, k -> new Object())) {
            c = connections.get(key);
            if (c != null && c.usable(MAX_IDLE_NANOS)) {
                return c;
            }
            if (c != null) {
                c.close(null);
            }
            if (closed) {
                throw new TransportException(protocol(), TransportException.Delivery.NOT_DELIVERED,
                        "the tcp client is closed", null);
            }
            boolean tls = TcpTls.TLS_SCHEME.equals(uri.getScheme());
            c = tls ? null : openUnix(UnixSockets.TCP.sameHostSocket(uri));
            if (c == null) {
                c = open(tls, host, uri.getPort());
            }
            connections.put(key, c);
            return c;
        }
    }

    /**
     * What calls over the connection of {@code key} ({@link #key}) went via when they last did:
     * {@link UnixSockets#VIA_UNIX} or {@link UnixSockets#VIA_TCP}; null before the first connection.
     */
    String via(String key) {
        ClientConnection c = connections.get(key);
        return c == null ? null : c.via();
    }

    /**
     * A connection to the server's Unix socket on this host, or null: none was named (another
     * host, another scheme, Unix sockets off) or it refused (a server gone, a stale socket file).
     */
    private ClientConnection openUnix(Path socket) {
        if (socket == null) {
            return null;
        }
        try {
            return new ClientConnection(socket.toString(), Wire.unix(socket), limits, readers);
        } catch (IOException | RuntimeException e) {
            LOG.debug("tcp connects over TCP: the Unix socket {} refused: {}", socket, e.toString());
            return null;
        }
    }

    private ClientConnection open(boolean tls, String host, int port) {
        if (!tls) {
            try {
                return new ClientConnection(host + ":" + port, Wire.tcp(new InetSocketAddress(host, port),
                        (int) settings.connectTimeout().toMillis()), limits, readers);
            } catch (IOException | RuntimeException e) {
                throw new TransportException(protocol(), TransportException.Delivery.NOT_DELIVERED, "cannot connect to "
                        + host + ":" + port + ": " + e, e);
            }
        }
        Socket socket = new Socket();
        try {
            socket.setTcpNoDelay(true);
            socket.connect(new InetSocketAddress(host, port), (int) settings.connectTimeout().toMillis());
            SSLSocket ssl = TcpTls.client(settings.tls(), socket, host, port);
            ssl.setSoTimeout((int) settings.connectTimeout().toMillis());
            ssl.startHandshake();
            return new ClientConnection(host + ":" + port, Wire.of(ssl), limits, readers);
        } catch (IOException | RuntimeException e) {
            try {
                socket.close();
            } catch (IOException ignored) {
                // failed anyway
            }
            throw new TransportException(protocol(), TransportException.Delivery.NOT_DELIVERED, "cannot connect to "
                    + host + ":" + port + " over TLS: " + e, e);
        }
    }

    private static String host(URI uri) {
        return Endpoints.socketHost(uri.getHost());
    }

    /** One connection per server: its scheme, host and port (its components share it). */
    static String key(URI uri) {
        return uri.getScheme() + "://" + host(uri) + ":" + uri.getPort();
    }

    @Override
    public void close() {
        closed = true;
        for (ClientConnection c : connections.values()) {
            c.close(null);
        }
        connections.clear();
        if (ownReaders != null) {
            ownReaders.shutdown();
        }
    }
}
