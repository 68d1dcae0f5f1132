package io.switchboard.protocol.soap;

import java.io.IOException;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.net.StandardSocketOptions;
import java.nio.channels.ServerSocketChannel;
import java.nio.channels.SocketChannel;
import javax.net.ssl.SSLContext;
import javax.net.ssl.SSLSocket;
import org.apache.axis2.transport.http.server.AxisHttpConnectionImpl;
import org.apache.axis2.transport.http.server.DefaultConnectionListener;
import org.apache.axis2.transport.http.server.DefaultConnectionListenerFailureHandler;
import org.apache.axis2.transport.http.server.HttpConnectionManager;
import org.apache.hc.core5.http.config.Http1Config;
import org.apache.hc.core5.http.io.SocketConfig;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Replacement for Axis2's DefaultConnectionListener, which always does {@code new ServerSocket(port)}
 * (all interfaces). Binds to a chosen address instead, and speaks TLS when given a context. It must extend DefaultConnectionListener because
 * SimpleHttpServer.start() casts the listener to that class (then calls awaitSocketOpen()/getPort()).
 * One accept thread; every accepted connection waits in the {@link ConnectionGuard} for its first byte, then is handed
 * to the connection manager (one pool thread per connection) on a {@link GuardedSocket} that enforces the request deadline.
 */
final class BoundConnectionListener extends DefaultConnectionListener {
    private static final Logger LOG = LoggerFactory.getLogger(BoundConnectionListener.class);

    private final String scheme;
    private final InetAddress bindAddress;
    private final int requestedPort;
    private final int backlog;
    private final HttpConnectionManager connManager;
    private final Http1Config http1Config;
    private final SocketConfig socketConfig;
    private final SSLContext tls;
    private final Limits limits;
    private ServerSocketChannel serverSocket;
    private ConnectionGuard guard;
    private volatile boolean destroyed;

    BoundConnectionListener(String scheme, InetAddress bindAddress, int port, int backlog,
                            HttpConnectionManager connManager, Http1Config http1Config,
                            SocketConfig socketConfig, SSLContext tls, Limits limits) throws IOException {
        super(scheme, port, connManager, new DefaultConnectionListenerFailureHandler(), http1Config, socketConfig);
        this.scheme = scheme;
        this.bindAddress = bindAddress;
        this.requestedPort = port;
        this.backlog = backlog;
        this.connManager = connManager;
        this.http1Config = http1Config;
        this.socketConfig = socketConfig;
        this.tls = tls;
        this.limits = limits;
    }

    /** The guard's bounds, from ServerSettings. */
    record Limits(int maxConnections, long idleTimeoutMillis, long requestTimeoutMillis, long minBytesPerSecond) { }

    @Override
    public void run() {
        ServerSocketChannel ss;
        ConnectionGuard g;
        try {
            ss = ServerSocketChannel.open();
            ss.setOption(StandardSocketOptions.SO_REUSEADDR, true);
            ss.bind(new InetSocketAddress(bindAddress, requestedPort), backlog);
            g = new ConnectionGuard("soap-" + ss.socket().getLocalPort(), limits.maxConnections(),
                    limits.idleTimeoutMillis(), this::serve);
        } catch (IOException e) {
            LOG.error("Cannot bind {}:{}", bindAddress, requestedPort, e);
            destroy();
            return;
        }
        synchronized (this) {
            serverSocket = ss;
            guard = g;
            notifyAll();
        }
        LOG.debug("listening on {}", ss.socket().getLocalSocketAddress());
        try {
            while (!Thread.interrupted() && !destroyed) {
                SocketChannel channel = ss.accept();
                try {
                    g.admit(channel);
                } catch (IOException | RuntimeException e) {
                    LOG.warn("Dropping connection from {}", channel.getRemoteAddress(), e);
                    channel.close();
                }
            }
        } catch (java.nio.channels.ClosedChannelException e) {
            LOG.debug("listener closed", e);   // stopping: Axis2 interrupts this thread, which closes the channel
        } catch (IOException e) {
            if (!destroyed) {
                LOG.warn("Listener stopped", e);
            }
        } finally {
            destroy();
        }
    }

    /** A connection's first byte arrived: serve it on a request thread, under the request deadline. */
    private void serve(ConnectionGuard.Connection connection) {
        try {
            Socket socket = connection.channel.socket();
            if (tls != null) {
                // the handshake runs at the first read, on the request thread and under the deadline;
                // a client that does not speak TLS fails it and is dropped
                SSLSocket ssl = (SSLSocket) tls.getSocketFactory().createSocket(socket, null, socket.getPort(), true);
                ssl.setUseClientMode(false);
                socket = ssl;
            }
            connManager.process(new AxisHttpConnectionImpl(scheme, new GuardedSocket(socket, connection,
                    limits.requestTimeoutMillis(), limits.minBytesPerSecond()), http1Config, socketConfig));
        } catch (IOException e) {
            throw new java.io.UncheckedIOException(e);
        }
    }

    /** The connection guard, once listening; for tests. */
    synchronized ConnectionGuard guard() {
        return guard;
    }

    @Override
    public synchronized void awaitSocketOpen() throws InterruptedException {
        while (serverSocket == null && !destroyed) {
            wait();
        }
    }

    @Override
    public synchronized int getPort() {
        return serverSocket != null ? serverSocket.socket().getLocalPort() : -1;
    }

    @Override
    public void close() throws IOException {
        ServerSocketChannel ss;
        ConnectionGuard g;
        synchronized (this) {
            ss = serverSocket;
            g = guard;
        }
        if (ss != null) {
            ss.close();
        }
        if (g != null) {
            g.close();
        }
    }

    @Override
    public void destroy() {
        destroyed = true;
        try {
            close();
        } catch (IOException e) {
            LOG.debug("close", e);
        }
        synchronized (this) {
            notifyAll();
        }
    }

    @Override
    public boolean isDestroyed() {
        return destroyed;
    }
}
