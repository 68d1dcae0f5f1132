package io.switchboard.protocol.soap;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.channels.SelectionKey;
import java.nio.channels.SocketChannel;
import java.nio.charset.StandardCharsets;
import org.eclipse.jetty.io.EndPoint;
import org.eclipse.jetty.io.ManagedSelector;
import org.eclipse.jetty.io.SocketChannelEndPoint;
import org.eclipse.jetty.io.ssl.SslConnection;
import org.eclipse.jetty.util.Callback;
import org.eclipse.jetty.util.thread.Scheduler;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * One connection of the SOAP server: Jetty's socket end point, which also knows where the
 * connection is (waiting for a request, receiving one, answering, between two) and holds each
 * request to its deadline. A request's head and body must arrive within {@code requestTimeout}
 * plus their size at {@code minBytesPerSecond}, counted from its first byte; Jetty's idle timeout
 * cannot bound that alone, since every trickled byte resets it. A request that misses the deadline
 * while the server waits for its bytes gets {@code 408 Request Timeout} and its connection is
 * closed a moment later; an operation that runs long once its request has arrived is not cut.
 *
 * <p>The bytes are counted here, on the socket (over TLS: the encrypted bytes, handshake
 * included); when an answer begins and ends is told by {@link SoapConnector}'s handler. The
 * connector checks the deadlines ({@link #checkDeadline}) and picks idle connections to displace
 * at its connection limit ({@link #displace}).
 */
final class SoapEndPoint extends SocketChannelEndPoint {
    private static final Logger LOG = LoggerFactory.getLogger(SoapEndPoint.class);
    private static final byte[] TIMEOUT = ("HTTP/1.1 408 Request Timeout\r\nConnection: close\r\nContent-Length: 0"
            + "\r\n\r\n").getBytes(StandardCharsets.US_ASCII);
    /** After a 408, what the sender still sends is read and dropped this long before the close. */
    private static final long LINGER_NANOS = 1_000_000_000L;

    /** Where a connection is; only the idle ones ({@link #WAITING}, {@link #BETWEEN_REQUESTS}) may be displaced. */
    enum State { WAITING, IN_REQUEST, RESPONDING, BETWEEN_REQUESTS, CUT, DISPLACED }

    private final long graceNanos;
    private final long minBytesPerSecond;
    private State state = State.WAITING;
    /** Idle since (idle states), the request's first byte ({@link State#IN_REQUEST}), or the cut. */
    private long sinceNanos = System.nanoTime();
    private long requestBytes;
    /** The next request's bytes that came while this one was answered (pipelining): its start and size. */
    private long nextStartNanos = -1;
    private long nextBytes;

    SoapEndPoint(SocketChannel channel, ManagedSelector selector, SelectionKey key, Scheduler scheduler,
                 long requestTimeoutMillis, long minBytesPerSecond) {
        super(channel, selector, key, scheduler);
        this.graceNanos = requestTimeoutMillis * 1_000_000L;
        this.minBytesPerSecond = minBytesPerSecond;
    }

    synchronized State state() {
        return state;
    }

    /** Since when an idle connection has been idle; {@link Long#MAX_VALUE} for any other. */
    synchronized long idleSinceNanos() {
        return state == State.WAITING || state == State.BETWEEN_REQUESTS ? sinceNanos : Long.MAX_VALUE;
    }

    synchronized boolean busy() {
        return state == State.IN_REQUEST || state == State.RESPONDING;
    }

    @Override
    public int fill(ByteBuffer buffer) throws IOException {
        State now = state();
        if (now == State.DISPLACED) {
            return -1;
        }
        if (now == State.CUT) {
            return drain();
        }
        int n = super.fill(buffer);
        if (n > 0 && arrived(n)) {
            buffer.limit(buffer.limit() - n);   // the bytes that came too late are not handed on
            cut();
            return 0;
        }
        return n;
    }

    /** Counts bytes that arrived; true if they came after the request's deadline. */
    private synchronized boolean arrived(int n) {
        long now = System.nanoTime();
        switch (state) {
            case WAITING, BETWEEN_REQUESTS -> {
                state = State.IN_REQUEST;
                sinceNanos = now;
                requestBytes = n;
                return false;
            }
            case IN_REQUEST -> {
                requestBytes += n;
                return overdue(now);
            }
            case RESPONDING -> {
                if (nextStartNanos < 0) {
                    nextStartNanos = now;
                }
                nextBytes += n;
                return false;
            }
            default -> {
                return false;
            }
        }
    }

    private boolean overdue(long now) {
        return now - sinceNanos > graceNanos + requestBytes * 1_000_000_000L / minBytesPerSecond;
    }

    /** The answer to the current request began: its deadline no longer applies. */
    synchronized void responding() {
        if (state == State.IN_REQUEST) {
            state = State.RESPONDING;
        }
    }

    /** The answer ended: the connection is idle, or in the next request if its bytes came meanwhile. */
    synchronized void completed() {
        if (state == State.IN_REQUEST || state == State.RESPONDING) {
            if (nextStartNanos >= 0) {
                state = State.IN_REQUEST;
                sinceNanos = nextStartNanos;
                requestBytes = nextBytes;
            } else {
                state = State.BETWEEN_REQUESTS;
                sinceNanos = System.nanoTime();
            }
        }
        nextStartNanos = -1;
        nextBytes = 0;
    }

    /** Marks an idle connection displaced (the caller closes it); false if it is no longer idle. */
    synchronized boolean displace() {
        if (state == State.WAITING || state == State.BETWEEN_REQUESTS) {
            state = State.DISPLACED;
            return true;
        }
        return false;
    }

    /**
     * Called by the connector every tick: cuts a request past its deadline while the server waits
     * for its bytes (not while its operation runs), and closes a cut connection once it has lingered.
     */
    void checkDeadline(long now) {
        boolean cut;
        boolean lingered;
        synchronized (this) {
            cut = state == State.IN_REQUEST && isFillInterested() && overdue(now);
            lingered = state == State.CUT && now - sinceNanos > LINGER_NANOS;
        }
        if (cut) {
            cut();
        } else if (lingered) {
            close();
        }
    }

    /**
     * Answers 408 (through TLS when the connection has it), ends the output, and from then on reads
     * and drops what still arrives until the connection is closed: closing a socket with unread
     * input sends a reset, and a reset can make the client drop the 408 it has not read yet.
     */
    private void cut() {
        long elapsedMillis;
        long bytes;
        synchronized (this) {
            if (state != State.IN_REQUEST) {
                return;
            }
            long now = System.nanoTime();
            elapsedMillis = (now - sinceNanos) / 1_000_000L;
            bytes = requestBytes;
            state = State.CUT;
            sinceNanos = now;
        }
        LOG.warn("Closing SOAP connection from {}: request incomplete after {} ms ({} bytes received; a request"
                        + " must arrive within {} ms plus its size at {} bytes/s)", getRemoteSocketAddress(), elapsedMillis,
                bytes, graceNanos / 1_000_000L, minBytesPerSecond);
        EndPoint app = getConnection() instanceof SslConnection ssl ? ssl.getSslEndPoint() : this;
        try {
            app.write(Callback.from(app::shutdownOutput, x -> close()), ByteBuffer.wrap(TIMEOUT));
        } catch (RuntimeException e) {   // a write in progress: no clean 408 possible
            LOG.debug("writing 408", e);
            close();
        }
    }

    private int drain() throws IOException {
        ByteBuffer sink = ByteBuffer.allocate(4096);
        int n;
        do {
            sink.clear();
            n = getChannel().read(sink);
        } while (n > 0);
        return n < 0 ? -1 : 0;
    }
}
