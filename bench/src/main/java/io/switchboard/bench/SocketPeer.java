package io.switchboard.bench;

import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetAddress;
import java.net.Socket;
import java.net.StandardProtocolFamily;
import java.net.UnixDomainSocketAddress;
import java.nio.channels.Channels;
import java.nio.channels.SocketChannel;
import java.nio.file.Path;
import java.util.concurrent.atomic.AtomicLong;

/**
 * What the peers over one plain socket share: the connection (loopback TCP, or a Unix domain
 * socket), opened on the first call and again after a failed one (its streams are out of step
 * then), and the count of bytes the client sent.
 * A subclass makes its streams in {@link #opened} and does one exchange in {@link #exchange}.
 *
 * <pre>{@code
 * final class MyPeer extends SocketPeer {
 *     MyPeer(int port) { super(port, null); }
 *     protected void opened(OutputStream out, InputStream in) { ... }
 *     protected Object exchange(Payload p) throws Exception { ... }
 * }
 * }</pre>
 */
abstract class SocketPeer implements Peer {
    private final int port;
    /** The Unix domain socket to connect to instead of the port, or null. */
    private final Path unixSocket;
    private final String recursion;
    private final AtomicLong sent = new AtomicLong();
    private java.io.Closeable socket;

    /** @param recursion why a deep list can overflow the stack ("Fory recurses per node"), or null */
    SocketPeer(int port, String recursion) {
        this.port = port;
        this.unixSocket = null;
        this.recursion = recursion;
    }

    /**
     * Over the Unix domain socket at {@code unixSocket}, its streams the JDK's over a blocking
     * channel (a Unix socket channel has no read timeout: a server that stops answering stops the bench).
     */
    SocketPeer(Path unixSocket, String recursion) {
        this.port = -1;
        this.unixSocket = unixSocket;
        this.recursion = recursion;
    }

    /** The connection is new: make the streams; {@code out} counts what is written to it. */
    protected abstract void opened(OutputStream out, InputStream in) throws IOException;

    /** Sends the payload and reads the answer over the streams of {@link #opened}. */
    protected abstract Object exchange(Payload p) throws Exception;

    @Override
    public final Object roundTrip(Payload p) throws Exception {
        if (socket == null && unixSocket != null) {
            SocketChannel channel = SocketChannel.open(StandardProtocolFamily.UNIX);
            channel.connect(UnixDomainSocketAddress.of(unixSocket));
            socket = channel;
            opened(new CountingOutputStream(Channels.newOutputStream(channel), sent), Channels.newInputStream(channel));
        } else if (socket == null) {
            Socket s = new Socket(InetAddress.getLoopbackAddress(), port);
            s.setTcpNoDelay(true);
            s.setSoTimeout(Sweep.CALL_TIMEOUT_MILLIS);
            socket = s;
            opened(new CountingOutputStream(s.getOutputStream(), sent), s.getInputStream());
        }
        try {
            return exchange(p);
        } catch (StackOverflowError e) {
            close();
            throw new Failure("StackOverflowError in the client" + (recursion == null ? "" : " (" + recursion + ")"));
        } catch (Exception e) {
            close();   // the streams are out of step now; the next call reconnects
            throw e;
        }
    }

    @Override
    public final long requestBytes(Payload p) throws Exception {
        long before = sent.get();
        roundTrip(p);
        return sent.get() - before;
    }

    @Override
    public final void close() {
        if (socket != null) {
            try {
                socket.close();
            } catch (IOException ignored) {
                // closing a loopback socket; nothing to do
            }
            socket = null;
        }
    }
}
