package io.switchboard.protocol.soap;

import io.switchboard.protocol.ServerSettings;
import io.switchboard.protocol.spi.ConnectionShares;
import io.switchboard.protocol.spi.StrangerWarnings;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.channels.SelectableChannel;
import java.nio.channels.SelectionKey;
import java.nio.channels.SocketChannel;
import java.nio.charset.StandardCharsets;
import java.util.HashMap;
import java.util.HashSet;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;
import java.util.function.Consumer;
import org.eclipse.jetty.http.HttpHeader;
import org.eclipse.jetty.http.HttpHeaderValue;
import org.eclipse.jetty.http.HttpStatus;
import org.eclipse.jetty.http.MetaData;
import org.eclipse.jetty.io.Content;
import org.eclipse.jetty.io.EndPoint;
import org.eclipse.jetty.io.ManagedSelector;
import org.eclipse.jetty.io.SelectorManager;
import org.eclipse.jetty.io.SocketChannelEndPoint;
import org.eclipse.jetty.io.ssl.SslConnection;
import org.eclipse.jetty.server.ConnectionFactory;
import org.eclipse.jetty.server.Handler;
import org.eclipse.jetty.server.HttpStream;
import org.eclipse.jetty.server.Request;
import org.eclipse.jetty.server.Response;
import org.eclipse.jetty.server.Server;
import org.eclipse.jetty.server.ServerConnector;
import org.eclipse.jetty.util.Callback;
import org.eclipse.jetty.util.IO;
import org.eclipse.jetty.util.thread.Scheduler;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Jetty's connector for the SOAP server, with the two bounds Jetty does not offer as such: a
 * whole-request deadline ({@link SoapEndPoint}) checked every {@value #TICK_MILLIS} ms, and
 * connection limits that favour work over stalling ({@link ConnectionShares}): at most
 * {@code maxConnectionsPerAddress} from one remote address and {@code maxConnections} in all. A new
 * connection over either displaces the connection of its share stalled longest (waiting for its
 * first request, kept alive between two, or in a request whose bytes have not all come), which is
 * closed without an answer; if every connection of the share is handling or answering a request,
 * the new one may make one request, for 2 s: a cancel message (which needs a connection of its
 * own, so would otherwise be lost exactly when its caller is busiest) is served, anything else
 * answered {@code 503 Service Unavailable} with {@code Retry-After: 1}, and the connection closes.
 * At most 16 such connections are kept at a time ({@link ConnectionShares}); beyond them the new
 * one is answered 503 at once and closed (over TLS closed without an answer, since no handshake
 * has been made). Jetty's own
 * {@code NetworkConnectionLimit} would instead stop accepting, and leave the new client waiting in
 * the kernel's accept queue with no answer at all.
 */
final class SoapConnector extends ServerConnector {
    private static final Logger LOG = LoggerFactory.getLogger(SoapConnector.class);
    static final long TICK_MILLIS = 100;
    /** A connection closed under a sender still sending lingers this long (see {@link SoapEndPoint}). */
    private static final long LINGER_NANOS = 1_000_000_000L;
    private static final long MAX_DRAIN_PER_TICK = 16L << 20;
    private static final byte[] BUSY = SoapEndPoint.BUSY;
    private static final long OVERFLOW_LIFETIME_NANOS = ConnectionShares.REFUSED_LIFETIME_MILLIS * 1_000_000L;

    private final ServerSettings settings;
    private final LibraryInternals shortcuts;
    private final boolean tls;
    private final Object lock = new Object();
    /** The connections counted against the limits: accepted and open, not displaced. Guarded by lock. */
    private final Map<SelectableChannel, Admitted> admitted = new HashMap<>();
    /**
     * Connections displaced before Jetty made their end points; each is closed through its end
     * point once made. Closed under Jetty instead, a socket whose end point has begun to wait for
     * bytes leaves that end point open, unseen by the selector, until the idle timeout. Guarded by lock.
     */
    private final Set<SelectableChannel> displacedBeforeEndPoint = new HashSet<>();
    /**
     * Connections over the limits kept to read one request, so that a client's cancel message,
     * which needs a connection of its own, still reaches its call when every connection of its
     * address is busy: at most {@link ConnectionShares#MAX_REFUSED_ANSWERING} at once, each for
     * {@link ConnectionShares#REFUSED_LIFETIME_MILLIS}; anything but a cancel is answered 503.
     * Guarded by lock.
     */
    private final Set<SelectableChannel> overflow = new HashSet<>();
    private final ConnectionShares shares;
    /** Sockets lingering after their close, each with when it began and its remote address. Changed under lingerLock. */
    private final Map<SocketChannel, Lingering> lingering = new ConcurrentHashMap<>();
    /** How many of {@link #lingering} each remote address has. Guarded by lingerLock. */
    private final Map<Object, Integer> lingeringPerAddress = new HashMap<>();
    // apart from lock: a close may come from code that holds Jetty's locks, which lock's holders call into
    private final Object lingerLock = new Object();
    private final java.util.concurrent.atomic.LongAdder lingered = new java.util.concurrent.atomic.LongAdder();
    /** Requests cut for arriving too slowly (408, or closed after an answer begun); for tests and logs. */
    private final StrangerWarnings cutRequests = new StrangerWarnings("cut");
    private final java.util.concurrent.atomic.LongAdder closedUnlingered = new java.util.concurrent.atomic.LongAdder();
    private final SoapEndPoint.Waiters waiters = new SoapEndPoint.Waiters();
    private volatile Scheduler.Task tick;
    private final java.util.concurrent.atomic.AtomicLong ticks = new java.util.concurrent.atomic.AtomicLong();
    private final java.util.concurrent.atomic.LongAdder clientLooks = new java.util.concurrent.atomic.LongAdder();
    private final java.util.concurrent.atomic.LongAdder clientsGone = new java.util.concurrent.atomic.LongAdder();
    private final java.util.concurrent.atomic.LongAdder earlyBytesDropped = new java.util.concurrent.atomic.LongAdder();
    /** How long a closed connection's socket lingers; tests lengthen it so that nothing ends on its own. */
    volatile long lingerNanos = LINGER_NANOS;
    /**
     * How long the thread that answered waits on its connection for more bytes, for connections made
     * from now on, at least 1 ms; tests lengthen it so that a starved machine cannot end the wait
     * before they come.
     */
    volatile long awaitMillis = SoapEndPoint.NEXT_REQUEST_WAIT_MILLIS;
    /** For tests: runs as a connection's end point is about to be made. */
    volatile Consumer<SelectableChannel> beforeEndPoint = channel -> { };
    /** For tests: runs when a connection has been chosen for displacement, before anything is closed. */
    volatile Consumer<SelectableChannel> afterDisplacing = channel -> { };
    /** For tests: runs in each connection's idle check as its idle timeout expires, before Jetty handles it. */
    volatile Runnable beforeIdleExpiry = () -> { };
    /** For tests: runs at the end of {@link #shutdown}, where Jetty's idle checks of the connections ran. */
    volatile Runnable afterShutdown = () -> { };

    SoapConnector(Server server, ServerSettings settings, LibraryInternals shortcuts, ConnectionFactory... factories) {
        super(server, -1, -1, factories);
        this.settings = settings;
        this.shortcuts = shortcuts;
        this.tls = settings.tls() != null;
        this.shares = new ConnectionShares(settings.maxConnections(), settings.maxConnectionsPerAddress());
        getSelectorManager().addEventListener(new Admission());
    }

    @Override
    public CompletableFuture<Void> shutdown() {
        CompletableFuture<Void> done = super.shutdown();
        afterShutdown.run();
        return done;
    }

    @Override
    protected SocketChannelEndPoint newEndPoint(SocketChannel channel, ManagedSelector selector, SelectionKey key) {
        beforeEndPoint.accept(channel);
        SoapEndPoint endPoint = new SoapEndPoint(channel, selector, key, getScheduler(),
                settings.requestTimeout().toMillis(), settings.minRequestBytesPerSecond(), this::linger, waiters, shortcuts);
        endPoint.setIdleTimeout(getIdleTimeout());
        endPoint.awaitMillis = awaitMillis;
        endPoint.beforeIdleExpiry = beforeIdleExpiry;
        synchronized (lock) {
            Admitted a = admitted.get(channel);
            if (a != null) {
                endPoint.acceptedAt(a.acceptedNanos);   // stalled since its accept: the order newcomers displace in
                a.endPoint = endPoint;
            } else if (overflow.contains(channel)) {
                endPoint.overflow(System.nanoTime());
                // the tick ends it at its lifetime, with a 503 if it sent nothing; the idle timeout is the backstop
                endPoint.setIdleTimeout(2 * ConnectionShares.REFUSED_LIFETIME_MILLIS);
            } else if (displacedBeforeEndPoint.remove(channel)) {
                endPoint.evictIfStalled();   // it reads the end of the stream and closes as soon as it wants bytes
            }
        }
        return endPoint;
    }

    /** A connection counted against the limits; its end point is made a moment after it is accepted. */
    private final class Admitted implements ConnectionShares.Member {
        final SelectableChannel channel;
        final Object address;
        final long acceptedNanos = System.nanoTime();
        volatile SoapEndPoint endPoint;

        Admitted(SelectableChannel channel) {
            this.channel = channel;
            this.address = addressOf((SocketChannel) channel);
        }

        @Override
        public Object address() {
            return address;
        }

        /** A connection without its end point yet has not sent a byte. */
        @Override
        public long stalledSinceNanos() {
            SoapEndPoint e = endPoint;
            return e == null ? acceptedNanos : e.stalledSinceNanos();
        }

        /** Marks it displaced, if it is still stalled; then {@link #evict} closes it. */
        @Override
        public boolean claim() {
            SoapEndPoint e = endPoint;
            return e == null || e.evictIfStalled();
        }

        @Override
        public void evict() {
            SoapEndPoint made;
            synchronized (lock) {
                admitted.remove(channel);
                made = endPoint;
                if (made == null) {
                    displacedBeforeEndPoint.add(channel);
                }
            }
            afterDisplacing.accept(channel);
            long n = shares.evictions();
            if (StrangerWarnings.due(n)) {
                LOG.warn("SOAP server at a connection limit ({} in all, {} per address): closing stalled {} ({} displaced"
                        + " so far)", settings.maxConnections(), settings.maxConnectionsPerAddress(), remote(), n);
            }
            if (made != null) {
                made.close();
            }
        }

        Object remote() {
            try {
                return ((SocketChannel) channel).getRemoteAddress();
            } catch (IOException e) {
                return "?";
            }
        }
    }

    @Override
    protected void doStart() throws Exception {
        super.doStart();
        tick = getScheduler().schedule(this::tick, TICK_MILLIS, TimeUnit.MILLISECONDS);
    }

    @Override
    protected void doStop() throws Exception {
        Scheduler.Task t = tick;
        if (t != null) {
            t.cancel();
        }
        super.doStop();
        closeLingering(true);
        waiters.close();
    }

    /**
     * A closed connection's socket, output ended, whose input is read and dropped for a while before
     * it is closed. Closed for Jetty, it no longer counts against the connection limits, so the
     * lingering sockets have the same bounds of their own: at most {@code maxConnections} in all
     * and {@code maxConnectionsPerAddress} from one remote address. Past them (a flood of refused
     * handshakes or of oversized requests) one is closed at once, and its sender may see a reset
     * rather than its refusal; one host's flood leaves the others' refusals their linger.
     */
    private void linger(SocketChannel channel) {
        Object address = addressOf(channel);
        synchronized (lingerLock) {
            if (lingering.size() >= settings.maxConnections()
                    || lingeringPerAddress.getOrDefault(address, 0) >= settings.maxConnectionsPerAddress()) {
                IO.close(channel);
                closedUnlingered.increment();
                return;
            }
            lingeringPerAddress.merge(address, 1, Integer::sum);
            lingering.put(channel, new Lingering(System.nanoTime(), address));
        }
        lingered.increment();
        if (!isRunning()) {
            closeLingering(true);
        }
    }

    /** A lingering socket's start and remote address. */
    private record Lingering(long sinceNanos, Object address) {
    }

    /** The remote host a connection's share is counted by: its IP address, without the port. */
    private static Object addressOf(SocketChannel channel) {
        try {
            java.net.SocketAddress r = channel.getRemoteAddress();
            return r instanceof java.net.InetSocketAddress inet && inet.getAddress() != null ? inet.getAddress() : r;
        } catch (IOException e) {
            return "?";
        }
    }

    /** Ends one socket's lingering: closes it and gives its address's share back. */
    private void endLingering(SocketChannel channel) {
        synchronized (lingerLock) {
            Lingering l = lingering.remove(channel);
            if (l != null) {
                lingeringPerAddress.computeIfPresent(l.address(), (a, n) -> n == 1 ? null : n - 1);
            }
        }
        IO.close(channel);
    }

    /** Sockets lingering now; for tests. */
    int lingeringConnections() {
        return lingering.size();
    }

    /** Sockets that have lingered so far; for tests. */
    long lingeredConnections() {
        return lingered.sum();
    }

    /** Requests cut for arriving too slowly so far; for tests. */
    long cutRequests() {
        return cutRequests.count();
    }

    /** Sockets that were to linger but were closed at once, past a lingering bound, so far; for tests. */
    long closedUnlingered() {
        return closedUnlingered.sum();
    }

    /** Drains every lingering socket; closes those at EOF, those past the linger time, or all of them. */
    private void closeLingering(boolean all) {
        long now = System.nanoTime();
        ByteBuffer sink = ByteBuffer.allocate(64 * 1024);
        for (Map.Entry<SocketChannel, Lingering> e : lingering.entrySet()) {
            SocketChannel channel = e.getKey();
            boolean done = all || now - e.getValue().sinceNanos() > lingerNanos;
            try {
                long drained = 0;
                for (int n; !done && drained < MAX_DRAIN_PER_TICK; drained += n) {
                    sink.clear();
                    n = channel.read(sink);
                    if (n < 0) {
                        done = true;
                    } else if (n == 0) {
                        break;
                    }
                }
            } catch (IOException x) {
                done = true;
            }
            if (done) {
                endLingering(channel);
            }
        }
    }

    /** Deadline checks made so far; for tests. */
    long ticks() {
        return ticks.get();
    }

    /**
     * Looks for the clients of running operations made so far, the clients found gone, and the
     * looks that found bytes sent before an answer; for tests.
     */
    long clientLooks() {
        return clientLooks.sum();
    }

    long clientsGone() {
        return clientsGone.sum();
    }

    long earlyBytesDropped() {
        return earlyBytesDropped.sum();
    }

    private void countLook(SoapEndPoint.Look look) {
        clientLooks.increment();
        if (look == SoapEndPoint.Look.GONE) {
            clientsGone.increment();
        } else if (look == SoapEndPoint.Look.BYTES_DROPPED) {
            earlyBytesDropped.increment();
        }
    }

    private void tick() {
        ticks.incrementAndGet();
        try {
            long now = System.nanoTime();
            for (EndPoint e : getConnectedEndPoints()) {
                if (e instanceof SoapEndPoint s) {
                    s.checkDeadline(now, cutRequests);
                    s.checkOverflowLifetime(now, OVERFLOW_LIFETIME_NANOS);
                    s.checkClientGone(now, this::countLook);
                }
            }
            closeLingering(false);
        } catch (RuntimeException e) {
            LOG.warn("checking SOAP request deadlines", e);
        } finally {
            if (isRunning()) {
                tick = getScheduler().schedule(this::tick, TICK_MILLIS, TimeUnit.MILLISECONDS);
            }
        }
    }

    /**
     * Open connections as Jetty holds them, for tests and logs. A displaced connection stays among
     * them until its close has run on Jetty's threads, a moment after the newcomer is admitted.
     */
    int openConnections() {
        return getConnectedEndPoints().size();
    }

    /** Connections admitted and neither closed nor displaced: within the limits at every moment; for tests. */
    int admittedConnections() {
        return shares.open();
    }

    /** How often the open connections' requests waited for their bytes through Jetty's selector; for tests. */
    long selectorWaitsInRequests() {
        return getConnectedEndPoints().stream().mapToLong(e -> e instanceof SoapEndPoint s ? s.selectorWaitsInRequest() : 0)
                .sum();
    }

    /** Selectors on which server threads wait for their connections' bytes, borrowed and not given back; for tests. */
    int waitSelectorsInUse() {
        return waiters.inUse();
    }

    /** Whether the connection's end point is open and waits for bytes through the selector; for tests. */
    boolean awaitsBytes(SelectableChannel channel) {
        return getConnectedEndPoints().stream().anyMatch(e -> e instanceof SoapEndPoint s && s.getChannel() == channel
                && s.awaitsBytes());
    }

    /** Connections over the limits kept for one request (a cancel's); for tests. */
    int overflowConnections() {
        synchronized (lock) {
            return overflow.size();
        }
    }

    /**
     * Connections whose request Jetty's handler has, for tests: unlike {@link #busyConnections},
     * not one whose request's head (or TLS handshake) is still coming, which a newcomer may displace.
     */
    int handlingConnections() {
        return (int) getConnectedEndPoints().stream().filter(e -> e instanceof SoapEndPoint s && s.inHandler()).count();
    }

    /** Connections in a request or its answer. */
    int busyConnections() {
        return (int) getConnectedEndPoints().stream().filter(e -> e instanceof SoapEndPoint s && s.busy()).count();
    }

    /** Connections displaced or refused at the limits so far. */
    long shed() {
        return shares.evictions() + shares.refusals();
    }

    /** Closes the idle connections (the server stops: left open, a client's next request on one would be lost). */
    void closeIdle() {
        for (EndPoint e : getConnectedEndPoints()) {
            if (e instanceof SoapEndPoint s && s.displace()) {
                s.close();
            }
        }
    }

    /** The connection limits, applied as each connection is accepted (see the class comment). */
    private final class Admission implements SelectorManager.AcceptListener {
        @Override
        public void onAccepting(SelectableChannel channel) {
            Admitted newcomer = new Admitted(channel);
            ConnectionShares.Admission a;
            synchronized (lock) {
                a = shares.admit(newcomer);
                if (a.admitted()) {
                    admitted.put(channel, newcomer);
                }
            }
            if (a.evicted() != null) {
                a.evicted().evict();
            }
            if (!a.admitted()) {
                long refused = shares.refusals();
                if (StrangerWarnings.due(refused)) {
                    LOG.warn("SOAP server refusing {} (a cancel message is still served on it, anything else gets 503):"
                            + " {} ({} refused so far)", newcomer.remote(), a.refusal(), refused);
                }
                if (shares.claimRefusedAnswer()) {
                    synchronized (lock) {
                        overflow.add(channel);   // its one request: a cancel is served, anything else gets 503
                    }
                    return;
                }
                if (!tls) {
                    try {
                        ((SocketChannel) channel).write(ByteBuffer.wrap(BUSY));   // non-blocking: best effort
                    } catch (IOException e) {
                        LOG.debug("refusing", e);
                    }
                }
                IO.close(channel);
            }
        }

        @Override
        public void onAcceptFailed(SelectableChannel channel, Throwable cause) {
            forget(channel);
        }

        @Override
        public void onClosed(SelectableChannel channel) {
            forget(channel);
        }

        private void forget(SelectableChannel channel) {
            Admitted a;
            boolean overflowed;
            synchronized (lock) {
                a = admitted.remove(channel);
                displacedBeforeEndPoint.remove(channel);
                overflowed = overflow.remove(channel);
            }
            if (a != null) {
                shares.leave(a);
            }
            if (overflowed) {
                shares.refusedAnswered();
            }
        }
    }

    /** The connection's end point under a request, through TLS if there is one. */
    static SoapEndPoint endPointOf(Request request) {
        EndPoint e = request.getConnectionMetaData().getConnection().getEndPoint();
        if (e instanceof SslConnection.SslEndPoint ssl) {
            e = ssl.getSslConnection().getEndPoint();
        }
        return e instanceof SoapEndPoint s ? s : null;
    }

    /**
     * The outermost handler: tells each connection's end point when Jetty begins to handle a
     * request, when its answer begins (a cut then sends no 408), when its body has been read whole
     * (the deadline stops there) and when the exchange ends (the connection is idle from then on).
     */
    static final class Tracker extends Handler.Wrapper {
        Tracker(Handler handler) {
            super(handler);
        }

        @Override
        public boolean handle(Request request, Response response, Callback callback) throws Exception {
            SoapEndPoint endPoint = endPointOf(request);
            if (endPoint != null) {
                endPoint.handling();
                request.addHttpStreamWrapper(stream -> new HttpStream.Wrapper(stream) {
                    @Override
                    public void send(MetaData.Request req, MetaData.Response res, boolean last, ByteBuffer content,
                                     Callback cb) {
                        if (res != null && res.getStatus() >= 200) {
                            endPoint.answering();
                        }
                        super.send(req, res, last, content, cb);
                    }

                    @Override
                    public Content.Chunk read() {
                        Content.Chunk chunk = super.read();
                        if (chunk != null && chunk.isLast() && !Content.Chunk.isFailure(chunk)) {
                            endPoint.arrivedWhole();
                        }
                        return chunk;
                    }

                    @Override
                    public void succeeded() {
                        endPoint.completed();
                        super.succeeded();
                    }

                    @Override
                    public void failed(Throwable x) {
                        endPoint.completed();
                        super.failed(x);
                    }
                });
                if (endPoint.overflow()) {
                    // over the limits: one request, then the connection closes; only a cancel is served
                    response.getHeaders().put(HttpHeader.CONNECTION, HttpHeaderValue.CLOSE.asString());
                    if (!request.getHeaders().contains(SoapCalls.CANCEL_HEADER)) {
                        endPoint.lingerAtClose();   // its body may still be coming: it reads the 503, not a reset
                        response.setStatus(HttpStatus.SERVICE_UNAVAILABLE_503);
                        response.getHeaders().put(HttpHeader.RETRY_AFTER, "1");
                        response.getHeaders().put(SoapCalls.BUSY_HEADER, "the request did not run");
                        response.write(true, null, callback);
                        return true;
                    }
                }
            }
            return super.handle(request, response, callback);
        }
    }
}
