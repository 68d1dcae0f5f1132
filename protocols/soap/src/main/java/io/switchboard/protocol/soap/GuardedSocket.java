package io.switchboard.protocol.soap;

import io.switchboard.protocol.soap.ConnectionGuard.Connection;
import io.switchboard.protocol.soap.ConnectionGuard.State;
import java.io.FilterOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetAddress;
import java.net.Socket;
import java.net.SocketAddress;
import java.net.SocketException;
import java.net.SocketTimeoutException;
import java.nio.charset.StandardCharsets;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The socket Axis2 serves one connection on, with a deadline on every request: its head and body
 * must arrive within {@code requestTimeout} plus their size at {@code minBytesPerSecond}, counted
 * from the request's first byte. The per-read socket timeout alone cannot bound that, since every
 * trickled byte resets it. A request that misses its deadline gets {@code 408 Request Timeout}
 * (if no response has begun) and its connection is closed, with a log line naming the sender.
 *
 * <p>A request starts with the first byte read after a response was written (or when the waiting
 * room handed the connection over); between requests the connection may be displaced by the
 * {@link ConnectionGuard}. Axis2 only calls the accessors overridden here.
 */
final class GuardedSocket extends Socket {
    private static final Logger LOG = LoggerFactory.getLogger(GuardedSocket.class);
    private static final byte[] TIMEOUT = ("HTTP/1.1 408 Request Timeout\r\nConnection: close\r\nContent-Length: 0"
            + "\r\n\r\n").getBytes(StandardCharsets.US_ASCII);

    private final Socket delegate;
    private final Connection connection;
    private final long graceNanos;
    private final long minBytesPerSecond;
    private final InputStream in;
    private final OutputStream out;
    /** What Axis2 asked for (0: none); the deadline may shorten it for one read. */
    private volatile int requestedTimeoutMillis;
    private long requestStartNanos;
    private long requestBytes;
    private boolean responseBegun;

    GuardedSocket(Socket delegate, Connection connection, long requestTimeoutMillis, long minBytesPerSecond)
            throws IOException {
        this.delegate = delegate;
        this.connection = connection;
        this.graceNanos = requestTimeoutMillis * 1_000_000L;
        this.minBytesPerSecond = minBytesPerSecond;
        this.requestedTimeoutMillis = delegate.getSoTimeout();
        this.in = new DeadlineInputStream(delegate.getInputStream());
        this.out = new ResponseOutputStream(delegate.getOutputStream());
        this.requestStartNanos = System.nanoTime(); // the waiting room saw the first byte arrive
        connection.closer(this::closeDelegateQuietly);
    }

    private long deadlineNanos() {
        return requestStartNanos + graceNanos + requestBytes * 1_000_000_000L / minBytesPerSecond;
    }

    /** Reads with the request's deadline; a connection between requests waits as Axis2 asked. */
    private final class DeadlineInputStream extends InputStream {
        private final InputStream raw;

        DeadlineInputStream(InputStream raw) {
            this.raw = raw;
        }

        @Override
        public int read() throws IOException {
            byte[] one = new byte[1];
            int n = read(one, 0, 1);
            return n <= 0 ? -1 : one[0] & 0xff;
        }

        @Override
        public int read(byte[] b, int off, int len) throws IOException {
            return uninterrupted(() -> readWithDeadline(b, off, len));
        }

        private int readWithDeadline(byte[] b, int off, int len) throws IOException {
            if (responseBegun) { // the previous request is answered: this read waits for the next one
                responseBegun = false;
                requestBytes = 0;
                requestStartNanos = -1;
                if (!connection.enter(State.BETWEEN_REQUESTS)) {
                    throw new SocketException("connection closed by the guard (displaced at the connection limit, or the server stopping)");
                }
            }
            if (requestStartNanos < 0) {
                delegate.setSoTimeout(requestedTimeoutMillis);
                int n = raw.read(b, off, len);
                if (n > 0) {
                    requestStartNanos = System.nanoTime();
                    requestBytes = n;
                    if (!connection.enter(State.IN_REQUEST)) {
                        throw new SocketException("connection closed by the guard (displaced at the connection limit, or the server stopping)");
                    }
                }
                return n;
            }
            long left = deadlineNanos() - System.nanoTime();
            if (left <= 0) {
                throw tooSlow();
            }
            int leftMillis = (int) Math.min(Integer.MAX_VALUE - 1, left / 1_000_000L + 1);
            int requested = requestedTimeoutMillis;
            delegate.setSoTimeout(requested == 0 ? leftMillis : Math.min(requested, leftMillis));
            int n;
            try {
                n = raw.read(b, off, len);
            } catch (SocketTimeoutException e) {
                if (deadlineNanos() - System.nanoTime() <= 0) {
                    throw tooSlow();
                }
                throw e;
            }
            if (n > 0) {
                requestBytes += n;
            }
            return n;
        }

        @Override
        public int available() throws IOException {
            return raw.available();
        }

        @Override
        public void close() throws IOException {
            raw.close();
        }
    }

    /** Marks the request answered once the first response byte is written. */
    private final class ResponseOutputStream extends FilterOutputStream {
        ResponseOutputStream(OutputStream raw) {
            super(raw);
        }

        @Override
        public void write(int b) throws IOException {
            begin();
            uninterrupted(() -> {
                out.write(b);
                return null;
            });
        }

        @Override
        public void write(byte[] b, int off, int len) throws IOException {
            begin();
            uninterrupted(() -> {
                out.write(b, off, len);
                return null;
            });
        }

        private void begin() {
            if (!responseBegun) {
                responseBegun = true;
                connection.enter(State.RESPONDING);
            }
        }
    }

    private interface Io<T> {
        T run() throws IOException;
    }

    /**
     * The socket comes from a channel, whose I/O closes the connection when the thread's interrupt
     * flag is set. An operation that leaves the flag set (restoring it after catching an
     * InterruptedException, say) must not lose its response, as it would not on a plain socket: the
     * flag is put aside for the I/O and set again after it. A thread interrupted while it blocks
     * (the server stopping) still closes the connection.
     */
    private static <T> T uninterrupted(Io<T> io) throws IOException {
        boolean interrupted = Thread.interrupted();
        try {
            return io.run();
        } finally {
            if (interrupted) {
                Thread.currentThread().interrupt();
            }
        }
    }

    private SocketTimeoutException tooSlow() {
        long elapsedMillis = (System.nanoTime() - requestStartNanos) / 1_000_000L;
        LOG.warn("Closing SOAP connection from {}: request incomplete after {} ms ({} bytes received; a request"
                        + " must arrive within {} ms plus its size at {} bytes/s)", connection.remote, elapsedMillis,
                requestBytes, graceNanos / 1_000_000L, minBytesPerSecond);
        if (!responseBegun) {
            try {
                delegate.getOutputStream().write(TIMEOUT);
                delegate.getOutputStream().flush();
                lingeringClose();
            } catch (IOException e) {
                LOG.debug("writing 408 to {}", connection.remote, e);
            }
        }
        closeDelegateQuietly();
        return new SocketTimeoutException("request from " + connection.remote + " incomplete after " + elapsedMillis
                + " ms: slower than the request deadline");
    }

    /**
     * Ends the 408 with a FIN and reads what the sender still trickles in for a moment (bounded in
     * time and bytes) before closing: closing a socket with unread input sends a reset, and a reset
     * can make the client drop the 408 it has not read yet.
     */
    private void lingeringClose() throws IOException {
        delegate.shutdownOutput();
        delegate.setSoTimeout(250);
        InputStream raw = delegate.getInputStream();
        byte[] sink = new byte[4096];
        long until = System.nanoTime() + 1_000_000_000L;
        int drained = 0;
        try {
            while (System.nanoTime() < until && drained < 64 * 1024) {
                int n = raw.read(sink);
                if (n < 0) {
                    return;
                }
                drained += n;
            }
        } catch (SocketTimeoutException quiet) {
            // nothing more came: close now
        }
    }

    private void closeDelegateQuietly() {
        try {
            close();
        } catch (IOException e) {
            LOG.debug("closing {}", connection.remote, e);
        }
    }

    @Override
    public InputStream getInputStream() {
        return in;
    }

    @Override
    public OutputStream getOutputStream() {
        return out;
    }

    @Override
    public void setSoTimeout(int timeout) throws SocketException {
        requestedTimeoutMillis = timeout;
        delegate.setSoTimeout(timeout);
    }

    @Override
    public int getSoTimeout() {
        return requestedTimeoutMillis;
    }

    @Override
    public synchronized void close() throws IOException {
        connection.closed();
        delegate.close();
    }

    @Override
    public void shutdownInput() throws IOException {
        delegate.shutdownInput();
    }

    @Override
    public void shutdownOutput() throws IOException {
        delegate.shutdownOutput();
    }

    @Override
    public boolean isClosed() {
        return delegate.isClosed();
    }

    @Override
    public boolean isConnected() {
        return delegate.isConnected();
    }

    @Override
    public boolean isBound() {
        return delegate.isBound();
    }

    @Override
    public boolean isInputShutdown() {
        return delegate.isInputShutdown();
    }

    @Override
    public boolean isOutputShutdown() {
        return delegate.isOutputShutdown();
    }

    @Override
    public void setTcpNoDelay(boolean on) throws SocketException {
        delegate.setTcpNoDelay(on);
    }

    @Override
    public boolean getTcpNoDelay() throws SocketException {
        return delegate.getTcpNoDelay();
    }

    @Override
    public void setSoLinger(boolean on, int linger) throws SocketException {
        delegate.setSoLinger(on, linger);
    }

    @Override
    public int getSoLinger() throws SocketException {
        return delegate.getSoLinger();
    }

    @Override
    public void setKeepAlive(boolean on) throws SocketException {
        delegate.setKeepAlive(on);
    }

    @Override
    public void setReceiveBufferSize(int size) throws SocketException {
        delegate.setReceiveBufferSize(size);
    }

    @Override
    public int getReceiveBufferSize() throws SocketException {
        return delegate.getReceiveBufferSize();
    }

    @Override
    public void setSendBufferSize(int size) throws SocketException {
        delegate.setSendBufferSize(size);
    }

    @Override
    public int getSendBufferSize() throws SocketException {
        return delegate.getSendBufferSize();
    }

    @Override
    public InetAddress getInetAddress() {
        return delegate.getInetAddress();
    }

    @Override
    public InetAddress getLocalAddress() {
        return delegate.getLocalAddress();
    }

    @Override
    public int getPort() {
        return delegate.getPort();
    }

    @Override
    public int getLocalPort() {
        return delegate.getLocalPort();
    }

    @Override
    public SocketAddress getRemoteSocketAddress() {
        return delegate.getRemoteSocketAddress();
    }

    @Override
    public SocketAddress getLocalSocketAddress() {
        return delegate.getLocalSocketAddress();
    }

    @Override
    public String toString() {
        return "GuardedSocket[" + delegate + "]";
    }
}
