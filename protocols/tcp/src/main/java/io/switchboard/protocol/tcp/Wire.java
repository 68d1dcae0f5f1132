package io.switchboard.protocol.tcp;

import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.Socket;
import java.net.SocketTimeoutException;
import java.net.StandardProtocolFamily;
import java.net.UnixDomainSocketAddress;
import java.nio.ByteBuffer;
import java.nio.channels.SelectionKey;
import java.nio.channels.Selector;
import java.nio.channels.SocketChannel;
import java.nio.file.Path;

/**
 * The byte stream under a {@link ClientConnection}: a TCP socket (TLS: an {@code SSLSocket}) or a
 * Unix domain socket. One thread writes at a time and one reads at a time, each under the
 * connection's lock; a read and a write may run together.
 */
interface Wire {
    /** Writes all of it, blocking while the peer's buffers are full. */
    void write(byte[] bytes, int offset, int length) throws IOException;

    /**
     * Reads what has arrived, at least one byte, waiting at most {@code timeoutMillis}.
     *
     * @return the bytes read, or -1 at the end of the stream
     * @throws SocketTimeoutException nothing arrived in time
     */
    int read(byte[] into, int offset, int length, int timeoutMillis) throws IOException;

    /** Closes it; a read or write under way ends with an exception. */
    void close() throws IOException;

    /** What the call record says a call over it went via: {@link UnixSockets#VIA_TCP} or {@link UnixSockets#VIA_UNIX}. */
    String via();

    /** A connected socket. */
    static Wire of(Socket socket) throws IOException {
        InputStream in = socket.getInputStream();
        OutputStream out = socket.getOutputStream();
        return new Wire() {
            @Override
            public void write(byte[] bytes, int offset, int length) throws IOException {
                out.write(bytes, offset, length);
            }

            @Override
            public int read(byte[] into, int offset, int length, int timeoutMillis) throws IOException {
                socket.setSoTimeout(timeoutMillis);
                return in.read(into, offset, length);
            }

            @Override
            public void close() throws IOException {
                socket.close();
            }

            @Override
            public String via() {
                return UnixSockets.VIA_TCP;
            }
        };
    }

    /**
     * A connection to the Unix domain socket at {@code path}. Non-blocking underneath, so that a
     * read waits no longer than asked: a read that finds nothing waits in its own selector, as a
     * socket with a read timeout waits in {@code poll}.
     */
    static Wire unix(Path path) throws IOException {
        SocketChannel channel = SocketChannel.open(StandardProtocolFamily.UNIX);
        try {
            channel.connect(UnixDomainSocketAddress.of(path));
            channel.configureBlocking(false);
            Selector readable = Selector.open();
            Selector writable = Selector.open();
            channel.register(readable, SelectionKey.OP_READ);
            channel.register(writable, SelectionKey.OP_WRITE);
            return new UnixWire(channel, readable, writable);
        } catch (IOException | RuntimeException e) {
            channel.close();
            throw e;
        }
    }

    /** See {@link #unix(Path)}. */
    final class UnixWire implements Wire {
        /** A writer waiting for room looks whether the connection closed this often. */
        private static final int WRITE_WAIT_MILLIS = 100;

        private final SocketChannel channel;
        private final Selector readable;
        private final Selector writable;

        private UnixWire(SocketChannel channel, Selector readable, Selector writable) {
            this.channel = channel;
            this.readable = readable;
            this.writable = writable;
        }

        @Override
        public void write(byte[] bytes, int offset, int length) throws IOException {
            ByteBuffer b = ByteBuffer.wrap(bytes, offset, length);
            while (b.hasRemaining()) {
                if (channel.write(b) == 0) {
                    await(writable, WRITE_WAIT_MILLIS);
                }
            }
        }

        @Override
        public int read(byte[] into, int offset, int length, int timeoutMillis) throws IOException {
            ByteBuffer b = ByteBuffer.wrap(into, offset, length);
            int n = channel.read(b);
            long deadline = System.nanoTime() + timeoutMillis * 1_000_000L;
            while (n == 0) {
                long left = (deadline - System.nanoTime()) / 1_000_000;
                if (left <= 0) {
                    throw new SocketTimeoutException("nothing to read within " + timeoutMillis + " ms");
                }
                await(readable, left);
                n = channel.read(b);
            }
            return n;
        }

        private static void await(Selector selector, long millis) throws IOException {
            try {
                selector.select(millis);
                selector.selectedKeys().clear();
            } catch (java.nio.channels.ClosedSelectorException e) {
                throw new java.nio.channels.ClosedChannelException();
            }
        }

        @Override
        public void close() throws IOException {
            try {
                channel.close();
            } finally {
                readable.close();   // wakes a reader or writer waiting in them
                writable.close();
            }
        }

        @Override
        public String via() {
            return UnixSockets.VIA_UNIX;
        }
    }
}
