package io.switchboard.protocol.tcp;

import io.switchboard.protocol.spi.UnixSockets;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.net.SocketTimeoutException;
import java.net.StandardProtocolFamily;
import java.net.StandardSocketOptions;
import java.net.UnixDomainSocketAddress;
import java.nio.ByteBuffer;
import java.nio.channels.SelectionKey;
import java.nio.channels.Selector;
import java.nio.channels.SocketChannel;
import java.nio.file.Path;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * The byte stream under a {@link ClientConnection}: a TCP socket channel (TLS: an {@code
 * SSLSocket}) or a Unix domain socket. One thread writes at a time and one reads at a time, each under the
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

    /**
     * How long past its timeout a read over TLS may still be taking in the rest of a record before
     * the wire closes its socket ({@link #of}).
     */
    long RECORD_SLACK_MILLIS = 1000;

    /**
     * A connected socket (an {@code SSLSocket}: TLS); a read waits in {@code poll} with the socket's
     * read timeout. That timeout bounds each wait for bytes, not a TLS record: the socket reads on
     * until the record it started is whole, so a peer that sends one byte at a time, each in time,
     * would hold the reader for as long as it likes. A read still under way {@link
     * #RECORD_SLACK_MILLIS} after its timeout closes the socket instead: the read fails, and with it
     * the connection.
     */
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
                // 0 reading, 1 returned, 2 cut by the watch: whichever comes first decides
                AtomicInteger state = new AtomicInteger();
                ScheduledFuture<?> watch = ClientConnection.WATCH.schedule(() -> {
                    if (state.compareAndSet(0, 2)) {
                        try {
                            socket.close();
                        } catch (IOException ignored) {
                            // closed already
                        }
                    }
                }, timeoutMillis + RECORD_SLACK_MILLIS, TimeUnit.MILLISECONDS);
                int n;
                try {
                    n = in.read(into, offset, length);
                } catch (IOException e) {
                    throw state.compareAndSet(0, 1) ? e : recordTooSlow(timeoutMillis, e);
                } finally {
                    watch.cancel(false);
                }
                if (!state.compareAndSet(0, 1)) {
                    throw recordTooSlow(timeoutMillis, null);   // an SSLSocket closed under its read may return -1, or data
                }
                return n;
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

    private static IOException recordTooSlow(int timeoutMillis, IOException cause) {
        return new IOException("a TLS record was still arriving " + RECORD_SLACK_MILLIS + " ms past the read's "
                + timeoutMillis + " ms: the connection is closed", cause);
    }

    /** A connection to the Unix domain socket at {@code path}; see {@link ChannelWire}. */
    static Wire unix(Path path) throws IOException {
        SocketChannel channel = SocketChannel.open(StandardProtocolFamily.UNIX);
        try {
            channel.setOption(StandardSocketOptions.SO_SNDBUF, UnixSockets.SEND_BUFFER_BYTES);
            channel.connect(UnixDomainSocketAddress.of(path));
            return ChannelWire.over(channel, UnixSockets.VIA_UNIX);
        } catch (IOException | RuntimeException e) {
            channel.close();
            throw e;
        }
    }

    /**
     * A plain TCP connection to {@code address} (no TLS), without Nagle's delay; see {@link
     * ChannelWire}: a read waits in its selector first, where a socket's stream with a read timeout
     * would try a read, find nothing and wait in {@code poll} before reading again.
     */
    static Wire tcp(InetSocketAddress address, int connectTimeoutMillis) throws IOException {
        SocketChannel channel = SocketChannel.open();
        try {
            channel.setOption(StandardSocketOptions.TCP_NODELAY, true);
            channel.socket().connect(address, connectTimeoutMillis);
            return ChannelWire.over(channel, UnixSockets.VIA_TCP);
        } catch (IOException | RuntimeException e) {
            channel.close();
            throw e;
        }
    }

    /**
     * A connected socket channel (a Unix domain socket, or TCP without TLS), non-blocking
     * underneath so that a read waits no longer than asked: a read that finds nothing waits in its own selector, as a socket with a read timeout
     * waits in {@code poll}. A read after one that emptied the socket waits in the selector first:
     * one system call fewer on a blocking call, whose answer is never in yet when its caller reads.
     */
    final class ChannelWire implements Wire {
        /** A writer waiting for room looks whether the connection closed this often. */
        private static final int WRITE_WAIT_MILLIS = 100;
        /**
         * The wire's own buffers (the JDK would copy through a per-thread buffer found in a
         * thread-local map): this size, grown once to {@link #LARGE_BUFFER_BYTES} on a connection
         * that carries a message larger than it, so that such a message crosses in fewer system
         * calls while a connection of small calls keeps small buffers.
         */
        private static final int BUFFER_BYTES = 64 << 10;
        private static final int LARGE_BUFFER_BYTES = 256 << 10;

        private final SocketChannel channel;
        private final Selector readable;
        private final Selector writable;
        private final String via;
        /** Used by the one thread writing. */
        private ByteBuffer out = ByteBuffer.allocateDirect(BUFFER_BYTES);
        /** Used by the one thread reading, as is {@link #drained}. */
        private ByteBuffer in = ByteBuffer.allocateDirect(BUFFER_BYTES);
        /**
         * The last read took all the socket held: the next one waits in the selector first rather
         * than try a read that most likely finds nothing (a blocking caller reads right after sending).
         */
        private boolean drained = true;

        private ChannelWire(SocketChannel channel, Selector readable, Selector writable, String via) {
            this.channel = channel;
            this.readable = readable;
            this.writable = writable;
            this.via = via;
        }

        /** Makes {@code channel} (connected) non-blocking with a selector for reads and one for writes; closes neither on failure. */
        static ChannelWire over(SocketChannel channel, String via) throws IOException {
            Selector readable = null;
            Selector writable = null;
            try {
                channel.configureBlocking(false);
                readable = Selector.open();
                writable = Selector.open();
                channel.register(readable, SelectionKey.OP_READ);
                channel.register(writable, SelectionKey.OP_WRITE);
                return new ChannelWire(channel, readable, writable, via);
            } catch (IOException | RuntimeException e) {
                if (readable != null) {
                    readable.close();
                }
                if (writable != null) {
                    writable.close();
                }
                throw e;
            }
        }

        @Override
        public void write(byte[] bytes, int offset, int length) throws IOException {
            if (length > out.capacity() && out.capacity() < LARGE_BUFFER_BYTES) {
                out = ByteBuffer.allocateDirect(LARGE_BUFFER_BYTES);
            }
            int done = 0;
            while (done < length) {
                int k = Math.min(out.capacity(), length - done);
                out.clear();
                out.put(bytes, offset + done, k).flip();
                while (out.hasRemaining()) {
                    if (channel.write(out) == 0) {
                        await(writable, WRITE_WAIT_MILLIS);
                    }
                }
                done += k;
            }
        }

        @Override
        public int read(byte[] into, int offset, int length, int timeoutMillis) throws IOException {
            ByteBuffer b = in.clear().limit(Math.min(length, in.capacity()));
            long deadline = System.nanoTime() + timeoutMillis * 1_000_000L;
            if (drained) {
                await(readable, timeoutMillis);
            }
            int n = channel.read(b);
            while (n == 0) {
                long left = (deadline - System.nanoTime()) / 1_000_000;
                if (left <= 0) {
                    throw new SocketTimeoutException("nothing to read within " + timeoutMillis + " ms");
                }
                await(readable, left);
                n = channel.read(b);
            }
            if (n > 0) {
                drained = n < b.limit();
                b.flip().get(into, offset, n);
                if (n == in.capacity() && in.capacity() < LARGE_BUFFER_BYTES) {
                    in = ByteBuffer.allocateDirect(LARGE_BUFFER_BYTES);   // a large message is coming in
                }
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
            return via;
        }

        /** A socket option of the channel, for tests. */
        <T> T option(java.net.SocketOption<T> name) throws IOException {
            return channel.getOption(name);
        }
    }
}
