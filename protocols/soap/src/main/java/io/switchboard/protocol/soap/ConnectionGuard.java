package io.switchboard.protocol.soap;

import java.io.IOException;
import java.net.SocketAddress;
import java.nio.ByteBuffer;
import java.nio.channels.SelectionKey;
import java.nio.channels.Selector;
import java.nio.channels.SocketChannel;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.function.Consumer;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Bounds the connections of one SOAP listener so that neither a flood of idle connections nor
 * slow senders can take every request thread.
 * <ul>
 * <li>A new connection waits here, on one selector thread, until its first byte arrives; only then
 *     does it get a request thread. Idle connections cost a file descriptor, not a thread, and are
 *     closed after the idle timeout.</li>
 * <li>At most {@code maxConnections} are open. At the limit a new connection displaces the one
 *     idle longest (waiting for its first byte, or between two keep-alive requests); if every
 *     connection is in a request, the new one is answered 503 and closed.</li>
 * <li>While a request arrives its connection's stream enforces the deadline ({@link GuardedSocket}).</li>
 * </ul>
 */
final class ConnectionGuard implements AutoCloseable {
    private static final Logger LOG = LoggerFactory.getLogger(ConnectionGuard.class);
    private static final byte[] BUSY = ("HTTP/1.1 503 Service Unavailable\r\nConnection: close\r\nContent-Length: 0"
            + "\r\nRetry-After: 1\r\n\r\n").getBytes(StandardCharsets.US_ASCII);

    /** Where a connection is; only {@link #WAITING} and {@link #BETWEEN_REQUESTS} may be displaced. */
    enum State { WAITING, IN_REQUEST, RESPONDING, BETWEEN_REQUESTS, CLOSED }

    /** One open connection; every state change happens under the guard's lock. */
    final class Connection {
        final SocketChannel channel;
        final SocketAddress remote;
        State state = State.WAITING;
        long idleSinceNanos = System.nanoTime();
        private Runnable closer;

        Connection(SocketChannel channel) {
            this.channel = channel;
            this.remote = remoteOf(channel);
        }

        /** @return false if the guard closed it meanwhile (displaced) */
        boolean enter(State next) {
            synchronized (ConnectionGuard.this) {
                if (state == State.CLOSED) {
                    return false;
                }
                state = next;
                if (next == State.BETWEEN_REQUESTS) {
                    idleSinceNanos = System.nanoTime();
                }
                return true;
            }
        }

        /** The connection ended (closed by Axis2, by a deadline, or displaced). */
        void closed() {
            synchronized (ConnectionGuard.this) {
                state = State.CLOSED;
                open.remove(this);
            }
        }

        /** How to close it from another thread once it runs on a request thread. */
        void closer(Runnable close) {
            synchronized (ConnectionGuard.this) {
                closer = close;
            }
        }

        private void closeNow() {
            Runnable c = closer;
            try {
                if (c != null) {
                    c.run();
                } else {
                    channel.close();
                }
            } catch (IOException | RuntimeException e) {
                LOG.debug("closing {}", remote, e);
            }
        }
    }

    private final int maxConnections;
    private final long idleTimeoutNanos;
    private final Consumer<Connection> dispatch;
    private final Set<Connection> open = new LinkedHashSet<>();
    private final ConcurrentLinkedQueue<Connection> toRegister = new ConcurrentLinkedQueue<>();
    private final Selector selector;
    private final Thread waitingRoom;
    private volatile boolean closing;
    private long refused;
    private long displaced;

    /** @param dispatch hands a connection whose first byte arrived (channel back in blocking mode) to a request thread */
    ConnectionGuard(String name, int maxConnections, long idleTimeoutMillis, Consumer<Connection> dispatch)
            throws IOException {
        this.maxConnections = maxConnections;
        this.idleTimeoutNanos = idleTimeoutMillis * 1_000_000L;
        this.dispatch = dispatch;
        this.selector = Selector.open();
        this.waitingRoom = new Thread(this::runWaitingRoom, name + "-waiting");
        waitingRoom.setDaemon(true);
        waitingRoom.start();
    }

    /** Takes a freshly accepted connection: admits it to the waiting room, displacing an idle one at the limit. */
    void admit(SocketChannel channel) throws IOException {
        Connection c = new Connection(channel);
        Connection victim = null;
        synchronized (this) {
            if (closing) {   // accepted just as the listener stopped: nobody would ever serve or close it
                channel.close();
                return;
            }
            if (open.size() >= maxConnections) {
                victim = longestIdle().orElse(null);
                if (victim == null) {
                    refused++;
                    if (refused == 1 || refused % 100 == 0) {
                        LOG.warn("SOAP listener at its limit of {} connections, all in a request: refusing {} with 503"
                                + " ({} refused so far)", maxConnections, c.remote, refused);
                    }
                } else {
                    victim.state = State.CLOSED;
                    open.remove(victim);
                    displaced++;
                    if (displaced == 1 || displaced % 100 == 0) {
                        LOG.warn("SOAP listener at its limit of {} connections: closing idle {} for {} ({} displaced"
                                + " so far)", maxConnections, victim.remote, c.remote, displaced);
                    }
                }
            }
            if (victim != null || open.size() < maxConnections) {
                open.add(c);
            } else {
                c = null;
            }
        }
        if (victim != null) {
            victim.closeNow();
        }
        if (c == null) {
            refuse(channel);
            return;
        }
        try {
            channel.configureBlocking(false);
        } catch (IOException e) {
            c.closed();   // gone before it was registered: do not count it
            throw e;
        }
        toRegister.add(c);
        selector.wakeup();
    }

    private Optional<Connection> longestIdle() {
        return open.stream()
                .filter(x -> x.state == State.WAITING || x.state == State.BETWEEN_REQUESTS)
                .min(Comparator.comparingLong(x -> x.idleSinceNanos));
    }

    private static void refuse(SocketChannel channel) {
        try (channel) {
            channel.configureBlocking(false);
            channel.write(ByteBuffer.wrap(BUSY)); // best effort; never blocks the accept thread
        } catch (IOException e) {
            LOG.debug("refusing", e);
        }
    }

    private void runWaitingRoom() {
        List<Connection> ready = new ArrayList<>();
        while (!closing) {
            try {
                selector.select(1000);
                for (Connection c; (c = toRegister.poll()) != null; ) {
                    if (c.channel.isOpen()) {
                        c.channel.register(selector, SelectionKey.OP_READ, c);
                    } else {
                        c.closed();
                    }
                }
                for (SelectionKey key : selector.selectedKeys()) {
                    key.cancel();
                    ready.add((Connection) key.attachment());
                }
                selector.selectedKeys().clear();
                closeIdle();
                if (!ready.isEmpty()) {
                    selector.selectNow(); // deregisters the cancelled keys, so the channels may block again
                    for (Connection c : ready) {
                        handOver(c);
                    }
                    ready.clear();
                }
            } catch (IOException | RuntimeException e) {
                if (!closing) {
                    LOG.warn("SOAP waiting room", e);
                }
            }
        }
    }

    private void handOver(Connection c) {
        if (!c.enter(State.IN_REQUEST)) {
            return;
        }
        try {
            c.channel.configureBlocking(true);
            dispatch.accept(c);
        } catch (IOException | RuntimeException e) {
            LOG.warn("Dropping connection from {}: {}", c.remote, e.toString());
            c.closed();
            c.closeNow();
        }
    }

    private void closeIdle() {
        long now = System.nanoTime();
        for (SelectionKey key : selector.keys()) {
            Connection c = (Connection) key.attachment();
            if (key.isValid() && now - c.idleSinceNanos > idleTimeoutNanos) {
                LOG.debug("closing {}: no request for {} ms", c.remote, idleTimeoutNanos / 1_000_000);
                key.cancel();
                c.closed();
                c.closeNow();
            }
        }
    }

    /** Open connections, for tests and logs. */
    synchronized int openConnections() {
        return open.size();
    }

    /** Connections currently in a request or its response. */
    synchronized int busyConnections() {
        return (int) open.stream().filter(x -> x.state == State.IN_REQUEST || x.state == State.RESPONDING).count();
    }

    @Override
    public void close() {
        synchronized (this) {
            closing = true;
        }
        selector.wakeup();
        try {
            waitingRoom.join(2000);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
        // Idle connections (waiting for a first request, or kept alive between requests on a request
        // thread) are closed now: left open, a client's next request on one would reach a stopped
        // server. One in a request finishes its answer, then ends: marked closed, it may not wait
        // for another request.
        List<Connection> idle = new ArrayList<>();
        synchronized (this) {
            for (Connection c : open) {
                if (c.state == State.WAITING || c.state == State.BETWEEN_REQUESTS) {
                    idle.add(c);
                }
                c.state = State.CLOSED;
            }
            open.clear();
        }
        for (Connection c : idle) {
            c.closeNow();
        }
        try {
            selector.close();
        } catch (IOException e) {
            LOG.debug("closing the selector", e);
        }
    }

    private static SocketAddress remoteOf(SocketChannel channel) {
        try {
            return channel.getRemoteAddress();
        } catch (IOException e) {
            return null;
        }
    }
}
