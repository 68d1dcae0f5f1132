package io.switchboard.bench;

import io.switchboard.protocol.DaemonThreads;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.atomic.AtomicLong;

/**
 * A loopback TCP relay that counts the bytes going from client to server. Used only for the
 * untimed wire-bytes call of protocols whose sockets the benchmark cannot reach (SOAP on Axis2,
 * gRPC on Netty); the timed calls go straight to the server.
 *
 * <pre>{@code
 * try (CountingProxy proxy = new CountingProxy(8080)) {
 *     // point a client at proxy.port() instead of 8080, call, then read proxy.upstreamBytes()
 * }
 * }</pre>
 */
final class CountingProxy implements AutoCloseable {
    private final ServerSocket listener;
    private final int targetPort;
    private final AtomicLong upstream = new AtomicLong();
    private final List<Socket> sockets = new CopyOnWriteArrayList<>();

    CountingProxy(int targetPort) throws IOException {
        this.targetPort = targetPort;
        this.listener = new ServerSocket(0, 50, InetAddress.getLoopbackAddress());
        DaemonThreads.start(this::acceptLoop, "counting-proxy-" + targetPort);
    }

    int port() {
        return listener.getLocalPort();
    }

    /** Bytes relayed from clients to the server so far. */
    long upstreamBytes() {
        return upstream.get();
    }

    private void acceptLoop() {
        while (!listener.isClosed()) {
            try {
                Socket client = listener.accept();
                Socket server = new Socket(InetAddress.getLoopbackAddress(), targetPort);
                client.setTcpNoDelay(true);
                server.setTcpNoDelay(true);
                sockets.add(client);
                sockets.add(server);
                pump(client, server, upstream);
                pump(server, client, new AtomicLong());
            } catch (IOException e) {
                return;   // closed
            }
        }
    }

    private static void pump(Socket from, Socket to, AtomicLong count) {
        DaemonThreads.start(() -> {
            byte[] buf = new byte[64 * 1024];
            try (InputStream in = from.getInputStream(); OutputStream out = to.getOutputStream()) {
                for (int n = in.read(buf); n >= 0; n = in.read(buf)) {
                    count.addAndGet(n);   // counted before forwarding: the server cannot answer bytes not yet counted
                    out.write(buf, 0, n);
                }
            } catch (IOException ignored) {
                // one side closed; the other follows when its stream ends
            } finally {
                closeQuietly(from);
                closeQuietly(to);
            }
        }, "counting-proxy-pump");
    }

    private static void closeQuietly(Socket s) {
        try {
            s.close();
        } catch (IOException ignored) {
            // already closed
        }
    }

    @Override
    public void close() {
        try {
            listener.close();
        } catch (IOException ignored) {
            // already closed
        }
        sockets.forEach(CountingProxy::closeQuietly);
    }
}
