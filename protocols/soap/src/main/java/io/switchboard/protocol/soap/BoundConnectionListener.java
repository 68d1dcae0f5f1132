package io.switchboard.protocol.soap;

import java.io.IOException;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.net.Socket;
import javax.net.ssl.SSLServerSocketFactory;
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
 * (all interfaces). Binds to a chosen address instead, and listens with TLS when given a factory. It must extend DefaultConnectionListener because
 * SimpleHttpServer.start() casts the listener to that class (then calls awaitSocketOpen()/getPort()).
 * One accept thread; every accepted connection is handed to the connection manager (one pool thread per connection).
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
    private final SSLServerSocketFactory tls;
    private ServerSocket serverSocket;
    private volatile boolean destroyed;

    BoundConnectionListener(String scheme, InetAddress bindAddress, int port, int backlog,
                            HttpConnectionManager connManager, Http1Config http1Config,
                            SocketConfig socketConfig, SSLServerSocketFactory tls) throws IOException {
        super(scheme, port, connManager, new DefaultConnectionListenerFailureHandler(), http1Config, socketConfig);
        this.scheme = scheme;
        this.bindAddress = bindAddress;
        this.requestedPort = port;
        this.backlog = backlog;
        this.connManager = connManager;
        this.http1Config = http1Config;
        this.socketConfig = socketConfig;
        this.tls = tls;
    }

    @Override
    public void run() {
        ServerSocket ss;
        try {
            // with TLS the handshake runs on the connection's pool thread at its first read, never
            // on this accept thread; a client that does not speak TLS fails it and is dropped
            ss = tls == null ? new ServerSocket() : tls.createServerSocket();
            ss.setReuseAddress(true);
            ss.bind(new InetSocketAddress(bindAddress, requestedPort), backlog);
        } catch (IOException e) {
            LOG.error("Cannot bind {}:{}", bindAddress, requestedPort, e);
            destroy();
            return;
        }
        synchronized (this) {
            serverSocket = ss;
            notifyAll();
        }
        LOG.debug("listening on {}", ss.getLocalSocketAddress());
        try {
            while (!Thread.interrupted() && !destroyed) {
                Socket socket = ss.accept();
                try {
                    connManager.process(new AxisHttpConnectionImpl(scheme, socket, http1Config, socketConfig));
                } catch (IOException | RuntimeException e) {
                    LOG.warn("Dropping connection from {}", socket.getRemoteSocketAddress(), e);
                    socket.close();
                }
            }
        } catch (IOException e) {
            if (!destroyed) {
                LOG.warn("Listener stopped", e);
            }
        } finally {
            destroy();
        }
    }

    @Override
    public synchronized void awaitSocketOpen() throws InterruptedException {
        while (serverSocket == null && !destroyed) {
            wait();
        }
    }

    @Override
    public synchronized int getPort() {
        return serverSocket != null ? serverSocket.getLocalPort() : -1;
    }

    @Override
    public void close() throws IOException {
        ServerSocket ss;
        synchronized (this) {
            ss = serverSocket;
        }
        if (ss != null) {
            ss.close();
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
