package io.switchboard.protocol.soap;

import io.switchboard.protocol.ServerCallContext;
import io.switchboard.protocol.spi.StrangerWarnings;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.channels.SelectionKey;
import java.nio.channels.Selector;
import java.nio.channels.SocketChannel;
import java.nio.charset.StandardCharsets;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.TimeoutException;
import java.util.function.Consumer;
import org.eclipse.jetty.io.EndPoint;
import org.eclipse.jetty.io.ManagedSelector;
import org.eclipse.jetty.io.SocketChannelEndPoint;
import org.eclipse.jetty.io.ssl.SslConnection;
import org.eclipse.jetty.util.Callback;
import org.eclipse.jetty.util.IO;
import org.eclipse.jetty.util.thread.Invocable;
import org.eclipse.jetty.util.thread.Scheduler;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * One connection of the SOAP server: Jetty's socket end point, which also knows where the
 * connection is (waiting for a request, receiving one, answering, between two) and holds each
 * request to its deadline. A request's head and body must arrive within {@code requestTimeout}
 * plus their size at {@code minBytesPerSecond}, counted from its first byte; Jetty's idle timeout
 * cannot bound that alone, since every trickled byte resets it. A request that misses the deadline
 * while the server waits for its bytes, with none in the socket, gets {@code 408 Request Timeout}
 * and its connection is closed; bytes that wait in the socket for a starved server count for the
 * sender, and an operation that runs long once its request has arrived is not cut.
 *
 * <p>A connection closed under a sender that may still be sending (after a 408, or a 413 for a
 * body over the size limit) lingers: its output ends, and the connector reads and drops what still
 * arrives for a moment before it closes the socket. Jetty closes at once, and closing a socket with
 * unread input sends a reset, under which a client still writing its request sees a broken pipe
 * and never reads the answer.
 *
 * <p>The bytes are counted here, on the socket (over TLS: the encrypted bytes, handshake
 * included); when the request has been read whole, and when the exchange ends, is told by
 * {@link SoapConnector}'s handler. Bytes that come in between belong to no request: a pipelined
 * request's clock starts when Jetty begins to handle it. The
 * connector checks the deadlines ({@link #checkDeadline}) and picks idle connections to displace
 * at its connection limit ({@link #displace}).
 *
 * <p>A client that closes its connection while its operation runs cancels the call, once the
 * operation has run a second ({@link #checkClientGone}).
 *
 * <p>The thread that answered a request waits up to {@value #NEXT_REQUEST_WAIT_MILLIS} ms on the
 * socket for the next one and handles it itself ({@link #awaitNextRequest}, for
 * {@link SoapHttpConnection}); only then does the connection go back to Jetty's selector. A
 * handler that reads the request's body waits the same way for bytes still on their way
 * ({@link #awaitRequestBytes}): Axis2's client sends a request's last chunk a moment after its body.
 */
final class SoapEndPoint extends SocketChannelEndPoint {
    private static final Logger LOG = LoggerFactory.getLogger(SoapEndPoint.class);
    private static final byte[] TIMEOUT = ("HTTP/1.1 408 Request Timeout\r\nConnection: close\r\nContent-Length: 0"
            + "\r\n\r\n").getBytes(StandardCharsets.US_ASCII);
    static final byte[] BUSY = ("HTTP/1.1 503 Service Unavailable\r\nConnection: close\r\nContent-Length: 0"
            + "\r\nRetry-After: 1\r\n" + SoapCalls.BUSY_HEADER + ": the request did not run\r\n\r\n")
            .getBytes(StandardCharsets.US_ASCII);
    /** When an over-the-limits connection was accepted ({@link SoapConnector}); 0 for one within them. */
    private volatile long overflowSinceNanos;

    /**
     * Where a connection is; only the idle ones ({@link #WAITING}, {@link #BETWEEN_REQUESTS}) may be
     * displaced. {@link #IN_REQUEST}: a request is arriving (until its body has been read whole), under
     * its deadline; {@link #ANSWERING}: it has arrived whole, and runs or is answered.
     */
    enum State { WAITING, IN_REQUEST, ANSWERING, BETWEEN_REQUESTS, CUT, DISPLACED }

    /** Requests handled by the thread that answered the one before and waited for them, in this JVM (for tests). */
    static final java.util.concurrent.atomic.LongAdder HANDLED_ON_THREAD = new java.util.concurrent.atomic.LongAdder();

    /** How long the thread that answered waits for the connection's next request before it leaves it to the selector. */
    static final long NEXT_REQUEST_WAIT_MILLIS = 5;
    /** The message context's property holding the end point of the connection a request came on. */
    static final String PROPERTY = "io.switchboard.soap.endPoint";
    /**
     * The message context's property holding a step that reads the request body's end if it has
     * come, without waiting (the operation has its request by then; only the envelope's end tags
     * are left). Until the body's end is read, bytes on the socket may be the request's own, so
     * its client is not looked for.
     */
    static final String BODY_END = "io.switchboard.soap.bodyEnd";
    /** An operation that has run this long has its client looked for, and again every as long. */
    static final long CLIENT_LOOK_AFTER_NANOS = 1_000_000_000L;
    /** At most so many bytes that came while an operation ran are read, to tell them from the client's close. */
    static final int LOOK_LIMIT = 64 * 1024;

    /** How long a thread waits on the socket ({@link #awaitNextRequest}, {@link #awaitRequestBytes}); set by the connector. */
    volatile long awaitMillis = NEXT_REQUEST_WAIT_MILLIS;
    /** For tests: runs as the idle timeout expires, before Jetty handles it; set by the connector. */
    volatile Runnable beforeIdleExpiry = () -> { };
    private final long graceNanos;
    private final LibraryInternals shortcuts;
    private final long minBytesPerSecond;
    private final SelectionKey key;
    /** Takes the socket of a connection that lingers after its close (the connector drains and closes it). */
    private final Consumer<SocketChannel> linger;
    private final Waiters waiters;
    /** The turn of the thread that handles this connection's requests and may wait for the next one ({@link #beginAwaiting}). */
    private final java.util.concurrent.atomic.AtomicReference<Turn> serving = new java.util.concurrent.atomic.AtomicReference<>();
    /** Jetty asked for the next request's bytes while {@link #serving}'s thread ran: that thread waits for them. */
    private boolean deferred;
    /** Whether the close lingers (a refused request whose sender may still be sending). */
    private boolean lingerAtClose;
    /** Its TLS client resumed a session but is no longer trusted: every request is refused ({@link UntrustedSessionRefusals}). */
    private volatile boolean noLongerTrusted;
    private volatile boolean lingering;
    private State state = State.WAITING;
    /** Whether the current request's answer has begun (it may, before the request's last bytes are read). */
    private boolean answered;
    /** Idle since (idle states), the request's first byte ({@link State#IN_REQUEST}), or the cut. */
    private long sinceNanos = System.nanoTime();
    private long requestBytes;
    /** Whether a thread handles the current request (Jetty has its head): it is working, not stalled. */
    private boolean inHandler;
    /** Waits for a request's bytes that went through Jetty's selector (not {@link #awaitRequestBytes}). */
    private long selectorWaitsInRequest;
    /** The call the current request runs, while it runs ({@link #running}); null between calls. */
    private ServerCallContext operation;
    /** When the socket under {@link #operation} was last looked at ({@link #checkClientGone}), or it began. */
    private long lastLookNanos;
    /**
     * Bytes came while an operation ran and were read to tell them from a close: what follows them
     * can no longer be parsed, so Jetty reads nothing more and the connection closes after the answer.
     */
    private volatile boolean inputLost;
    /** Reads by Jetty ({@link #fill}) and by the look for a client gone never overlap. */
    private final Object reading = new Object();

    /** What a look for a running operation's client found ({@link #checkClientGone}). */
    enum Look { NOT_DUE, THERE, GONE, BYTES_DROPPED }

    SoapEndPoint(SocketChannel channel, ManagedSelector selector, SelectionKey key, Scheduler scheduler,
                 long requestTimeoutMillis, long minBytesPerSecond, Consumer<SocketChannel> linger, Waiters waiters,
                 LibraryInternals shortcuts) {
        super(channel, selector, key, scheduler);
        this.shortcuts = shortcuts;
        this.graceNanos = requestTimeoutMillis * 1_000_000L;
        this.minBytesPerSecond = minBytesPerSecond;
        this.key = key;
        this.linger = linger;
        this.waiters = waiters;
    }

    /**
     * Marks a connection accepted over the connection limits, kept to read one request: only a
     * cancel message is served on it, then it closes ({@link SoapConnector}).
     */
    void overflow(long acceptedNanos) {
        overflowSinceNanos = acceptedNanos;
    }

    boolean overflow() {
        return overflowSinceNanos != 0;
    }

    /**
     * Called by the connector every tick: an over-the-limits connection whose request's head has
     * not all come within {@code lifetimeNanos} is closed, with a 503 if it sent nothing (in plain
     * text; under TLS its handshake may not have been made); one whose request is handled (a
     * cancel, or its 503) is left to end.
     */
    void checkOverflowLifetime(long now, long lifetimeNanos) {
        long since = overflowSinceNanos;
        if (since == 0 || now - since <= lifetimeNanos) {
            return;
        }
        boolean silent;
        synchronized (this) {
            if (!stalled()) {
                return;
            }
            silent = state == State.WAITING;
            state = State.CUT;
        }
        if (!silent || getConnection() instanceof SslConnection) {
            close();
            return;
        }
        try {
            write(Callback.from(this::close, x -> close()), ByteBuffer.wrap(BUSY));
        } catch (RuntimeException e) {
            close();
        }
    }

    /** Whether the selector watches the socket for bytes; for tests. */
    boolean awaitsBytes() {
        return key.isValid() && (key.interestOps() & SelectionKey.OP_READ) != 0;
    }

    synchronized State state() {
        return state;
    }

    /** Since when an idle connection has been idle; {@link Long#MAX_VALUE} for any other. */
    synchronized long idleSinceNanos() {
        return state == State.WAITING || state == State.BETWEEN_REQUESTS ? sinceNanos : Long.MAX_VALUE;
    }

    /**
     * Since when the connection has been stalled: idle, or in a request whose head has not all come
     * (since its first byte); {@link Long#MAX_VALUE} while a request is handled or answered.
     */
    synchronized long stalledSinceNanos() {
        return stalled() ? sinceNanos : Long.MAX_VALUE;
    }

    private boolean stalled() {
        return state == State.WAITING || state == State.BETWEEN_REQUESTS || (state == State.IN_REQUEST && !inHandler);
    }

    /** Whether Jetty's handler has the connection's request: its head has all come, so it is not stalled; for tests. */
    /**
     * Jetty's idle check, which may throw once and still leave the connection to the next check.
     * Jetty 12.0 throws a {@code NullPointerException} from {@code HttpChannelState.onIdleTimeout}
     * when the connection's request completes on another thread as the timeout fires. Out of here,
     * it would end Jetty's idle checks of this connection for good ({@code IdleTimeout} schedules
     * the next check only after this returns): an idle connection then stays open until it is
     * displaced at the listener's limit. Caught, the next check comes one idle timeout later and
     * finds the connection idle; not closed here, as the answer may still be on its way out.
     */
    @Override
    protected void onIdleExpired(TimeoutException timeout) {
        try {
            beforeIdleExpiry.run();
            super.onIdleExpired(timeout);
        } catch (RuntimeException raced) {
            LOG.warn("the idle check of a SOAP connection failed ({}); the next comes one idle timeout later",
                    raced.toString());
        }
    }

    synchronized boolean inHandler() {
        return inHandler;
    }

    synchronized boolean busy() {
        return state == State.IN_REQUEST || state == State.ANSWERING;
    }

    @Override
    public int fill(ByteBuffer buffer) throws IOException {
        State now = state();
        if (now == State.DISPLACED || inputLost) {
            return -1;
        }
        if (now == State.CUT) {   // the 408 is on its way, then the close: what arrives meanwhile is dropped
            drop();
            return 0;
        }
        int n;
        synchronized (reading) {
            n = super.fill(buffer);
        }
        if (n > 0) {
            // bytes read late are still taken: they may have waited in the socket for a starved server
            // (the sender was on time); a sender that is late leaves the server waiting, where the
            // connector's tick cuts it
            arrived(n);
        }
        return n;
    }

    /**
     * A read that waits on a connection closed meanwhile (lingering) or displaced fails as after any close; the
     * next request's bytes, wanted by the thread that answered, are left to that thread to wait for.
     */
    @Override
    protected void needsFillInterest() {
        if (lingering || inputLost || state() == State.DISPLACED) {
            getFillInterest().onClose();
        } else if (servedByThisThread() && state() == State.BETWEEN_REQUESTS) {
            deferred = true;
        } else {
            synchronized (this) {
                if (state == State.IN_REQUEST) {
                    selectorWaitsInRequest++;
                }
            }
            super.needsFillInterest();
        }
    }

    synchronized long selectorWaitsInRequest() {
        return selectorWaitsInRequest;
    }

    private boolean servedByThisThread() {
        Turn t = serving.get();
        return t != null && t.thread == Thread.currentThread();
    }

    /**
     * The current thread handles this connection and may wait for its next request: its turn, which
     * it ends with {@link #endAwaiting}; null if it serves the connection already, or must not block.
     */
    Turn beginAwaiting() {
        if (!shortcuts.awaitOnThread() || servedByThisThread() || Invocable.isNonBlockingInvocation()) {
            return null;
        }
        Turn t = new Turn(waiters);
        serving.set(t);
        return t;
    }

    /**
     * Waits for the next request's first bytes, if Jetty wants them: true if they came and were handled
     * on this thread; false if none is wanted, or none came in time (the selector watches from now on).
     * Before the connection goes back to Jetty's selector the turn ends: the selector may hand it to
     * another thread at once, which must find nothing of this one's.
     */
    boolean awaitNextRequest(Turn turn) {
        if (!deferred) {
            return false;
        }
        deferred = false;
        if (awaitReadable() && isOpen()) {
            boolean handled = getFillInterest().fillable();   // Jetty's read callback, here: the connection handles the request
            if (handled) {
                HANDLED_ON_THREAD.increment();
            }
            return handled;
        }
        leave(turn);
        super.needsFillInterest();
        return false;
    }

    /**
     * Waits a moment on the calling thread for more of the current request's bytes: true if they
     * came. False at once on a thread that must not block, outside a request, or past the
     * request's deadline, so that the reader waits through Jetty's selector, where the deadline is
     * checked. Through the selector, a blocked reader is woken by a second thread woken first.
     */
    boolean awaitRequestBytes() {
        if (!shortcuts.awaitOnThread() || Invocable.isNonBlockingInvocation()) {
            return false;
        }
        synchronized (this) {
            if (state != State.IN_REQUEST || overdue(System.nanoTime())) {
                return false;
            }
        }
        return awaitReadable() && isOpen();
    }

    /** Whether the socket had bytes to read (or reached its end) within {@link #awaitMillis}. */
    private boolean awaitReadable() {
        Turn t = serving.get();
        return t != null && t.thread == Thread.currentThread() ? t.awaitReadable(getChannel(), awaitMillis)
                : waiters.awaitReadable(getChannel(), awaitMillis);
    }

    /** Ends the turn: its selector given back, and no longer the connection's (unless another has begun since). */
    private void leave(Turn turn) {
        turn.end();
        serving.compareAndSet(turn, null);
    }

    /**
     * The thread leaves the connection; a wait it still owed goes to the selector. Nothing more if
     * its turn ended already ({@link #awaitNextRequest} handed the connection on: another thread
     * may serve it now).
     */
    void endAwaiting(Turn turn) {
        if (turn.ended()) {
            return;
        }
        leave(turn);
        if (deferred) {
            deferred = false;
            super.needsFillInterest();
        }
    }

    /**
     * One thread's time serving a connection, between {@link #beginAwaiting} and {@link #endAwaiting}
     * or the hand-off in {@link #awaitNextRequest}: the thread, and the selector it waits on for the
     * connection's bytes, borrowed for the whole turn with the socket registered on it, so that a
     * wait is one {@code epoll_wait}, not also an addition and a removal of the socket. A turn's
     * selector is used by its thread alone and given back once, when the turn ends: a thread that
     * Jetty's selector starts on the connection has a turn of its own.
     */
    static final class Turn {
        final Thread thread = Thread.currentThread();
        private final Waiters waiters;
        private Selector selector;
        private SelectionKey key;
        private boolean ended;

        Turn(Waiters waiters) {
            this.waiters = waiters;
        }

        /** Whether the socket had bytes to read (or reached its end) within the time; on the turn's thread only. */
        boolean awaitReadable(SocketChannel channel, long millis) {
            if (ended) {
                return false;
            }
            try {
                if (selector == null) {
                    selector = waiters.borrow();
                    if (selector == null) {
                        return false;
                    }
                }
                if (key == null) {
                    key = channel.register(selector, SelectionKey.OP_READ);
                }
                selector.selectedKeys().clear();
                return selector.select(millis) > 0;
            } catch (IOException | RuntimeException e) {   // closed meanwhile: the selector path decides
                giveBack();
                return false;
            }
        }

        /** Gives the selector back, the socket no longer on it: a closed socket stays open until every selector lets go. */
        private void giveBack() {
            if (selector != null) {
                waiters.giveBack(selector, key);
                selector = null;
                key = null;
            }
        }

        void end() {
            giveBack();
            ended = true;
        }

        boolean ended() {
            return ended;
        }
    }

    /**
     * The connection was accepted at {@code nanos}: it has waited for its first byte since then,
     * not since this end point was made, which Jetty does on a pool thread, on a busy machine
     * after connections accepted later have begun their requests.
     */
    synchronized void acceptedAt(long nanos) {
        if (state == State.WAITING) {
            sinceNanos = nanos;
        }
    }

    /** Counts bytes that arrived; the first of a request starts its clock. */
    private synchronized void arrived(int n) {
        switch (state) {
            case WAITING, BETWEEN_REQUESTS -> {
                state = State.IN_REQUEST;
                sinceNanos = System.nanoTime();
                requestBytes = n;
            }
            case IN_REQUEST -> requestBytes += n;
            default -> {
            }
        }
    }

    private boolean overdue(long now) {
        return now - sinceNanos > graceNanos + requestBytes * 1_000_000_000L / minBytesPerSecond;
    }

    /** Jetty handles a request: one whose bytes all came with the previous one's (pipelined) starts here. */
    synchronized void handling() {
        inHandler = true;
        if (state == State.WAITING || state == State.BETWEEN_REQUESTS) {
            state = State.IN_REQUEST;
            sinceNanos = System.nanoTime();
            requestBytes = 0;
        }
    }

    /** The request's body has been read whole: its deadline no longer applies. */
    synchronized void arrivedWhole() {
        if (state == State.IN_REQUEST) {
            state = State.ANSWERING;
        }
    }

    /** The answer to the current request has begun: a cut then closes without a 408. */
    synchronized void answering() {
        answered = true;
    }

    /**
     * The current request runs {@code call} until the returned scope closes: if its client closes
     * the connection meanwhile, the call is cancelled ({@link #checkClientGone}).
     */
    ServerCallContext.Scope running(ServerCallContext call) {
        synchronized (this) {
            operation = call;
            lastLookNanos = System.nanoTime();
        }
        return () -> {
            synchronized (this) {
                if (operation == call) {
                    operation = null;
                }
            }
        };
    }

    /**
     * Called by the connector every tick: once an operation has run {@link #CLIENT_LOOK_AFTER_NANOS},
     * and every as long again, looks whether its client is still there, and tells {@code seen}
     * what it found before it cancels anything. HTTP/1.1 gives a server no
     * sign of a client that went away while it works (Jetty reads the socket again only once the
     * answer is sent), and SOAP has no cancel of its own: a client that timed out, or whose process
     * ended, left its operation running to the end. A socket that turns readable while the
     * operation runs, its request read whole and no answer begun, holds either its end (the client
     * closed: the call is cancelled, as a closed tcp or gRPC connection cancels its calls) or bytes
     * a client should not send before its answer (SOAP requests are POSTs, which clients do not
     * pipeline): those are read and dropped, at most {@value #LOOK_LIMIT} bytes a look, the
     * operation runs on (over TLS, a client's close may come as its alert first, its end a moment
     * later: the next look finds it) and the connection closes after the answer. A call whose
     * deadline comes before the next look is left to its deadline.
     */
    void checkClientGone(long now, Consumer<Look> seen) {
        Found found = lookForClient(now);
        if (found.look() != Look.NOT_DUE) {
            seen.accept(found.look());   // before the cancel: whoever sees the call cancelled sees it counted
        }
        if (found.look() == Look.GONE) {
            if (deadlineBeforeNextLook(found.call(), now)) {
                // most often a caller that gave up at its deadline: the server's own, later by the
                // request's time on the way, ends the call sooner than a next look would, and as
                // what it is, so the calls the operation makes fail as past their deadline
                LOG.debug("the client {} closed its SOAP connection while its operation ran: left to its deadline",
                        getRemoteSocketAddress());
                return;
            }
            LOG.debug("the client {} closed its SOAP connection while its operation ran: the call is cancelled",
                    getRemoteSocketAddress());
            found.call().cancel();
        }
    }

    /** Whether {@code call}'s deadline comes before the look after the one at {@code now}. */
    private static boolean deadlineBeforeNextLook(ServerCallContext call, long now) {
        Long deadline = call.deadlineNanos();
        return deadline != null && deadline - now < CLIENT_LOOK_AFTER_NANOS;
    }

    /** What a look found, and the call it looked for. */
    private record Found(Look look, ServerCallContext call) {
    }

    private Found lookForClient(long now) {
        ServerCallContext call;
        synchronized (this) {
            call = operation;
            if (call == null || state != State.ANSWERING || answered
                    || now - lastLookNanos < CLIENT_LOOK_AFTER_NANOS) {
                return new Found(Look.NOT_DUE, call);
            }
            lastLookNanos = now;
        }
        if (!waiters.readableNow(getChannel())) {
            return new Found(Look.THERE, call);
        }
        boolean ended = false;
        int dropped = 0;
        synchronized (reading) {
            synchronized (this) {
                if (operation != call || answered) {
                    return new Found(Look.THERE, call);   // the answer is on its way: the socket is Jetty's again
                }
            }
            ByteBuffer sink = ByteBuffer.allocate(4096);
            try {
                while (dropped < LOOK_LIMIT) {
                    int n = getChannel().read(sink);
                    if (n < 0) {
                        ended = true;
                        break;
                    }
                    if (n == 0) {
                        break;
                    }
                    dropped += n;
                    sink.clear();
                }
            } catch (IOException e) {
                ended = true;   // reset by the peer
            }
            if (dropped > 0) {
                inputLost = true;
                lingerAtClose();   // more may come: closed over unread bytes, the socket would reset the answer
            }
        }
        if (ended) {
            return new Found(Look.GONE, call);
        }
        if (dropped > 0) {
            LOG.debug("{} bytes from {} came while its operation ran: dropped, and the connection closes after the answer",
                    dropped, getRemoteSocketAddress());
            return new Found(Look.BYTES_DROPPED, call);
        }
        return new Found(Look.THERE, call);
    }

    /** The exchange ended: the connection is idle until the next request's first byte. */
    synchronized void completed() {
        operation = null;
        answered = false;
        inHandler = false;
        if (state == State.IN_REQUEST || state == State.ANSWERING) {
            state = State.BETWEEN_REQUESTS;
            sinceNanos = System.nanoTime();
        }
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
     * Marks a stalled connection displaced to admit another (the caller closes it): an idle one, or
     * one whose request head has not all come; false if it is handled or answered by now.
     */
    synchronized boolean evictIfStalled() {
        if (!stalled()) {
            return false;
        }
        state = State.DISPLACED;   // what Jetty reads next is the end of the stream, as if its client had gone
        return true;
    }

    boolean noLongerTrusted() {
        return noLongerTrusted;
    }

    void noLongerTrusted(boolean untrusted) {
        noLongerTrusted = untrusted;
    }

    /** The request is refused (413) while its sender may still be sending: the close that follows lingers. */
    synchronized void lingerAtClose() {
        lingerAtClose = shortcuts.lingerAtClose();
    }

    @Override
    public void doClose() {
        boolean lingers;
        synchronized (this) {
            lingers = lingerAtClose;
            lingerAtClose = false;
        }
        if (!lingers) {
            super.doClose();
            return;
        }
        lingering = true;
        key.cancel();   // the selector lets go; the connector drains the socket from now on
        try {
            getChannel().shutdownOutput();
        } catch (IOException e) {
            LOG.debug("ending the output", e);
        }
        linger.accept(getChannel());
    }

    /** Closed for Jetty once it lingers, though its socket stays open a moment longer. */
    @Override
    public boolean isOpen() {
        return !lingering && super.isOpen();
    }

    /**
     * Called by the connector every tick: cuts a request past its deadline while the server waits
     * for its bytes and none has come. Bytes already in the socket mean the server is late, not the
     * sender (a starved selector thread has not read them yet), so they keep the request.
     */
    void checkDeadline(long now, StrangerWarnings cuts) {
        boolean overdue;
        synchronized (this) {
            overdue = state == State.IN_REQUEST && isFillInterested() && overdue(now);
        }
        if (overdue && !waiters.readableNow(getChannel())) {
            cut(cuts);
        }
    }

    /** Answers 408 (through TLS when the connection has it) unless an answer has begun, and closes, lingering. */
    private void cut(StrangerWarnings cuts) {
        long elapsedMillis;
        long bytes;
        boolean answerBegun;
        synchronized (this) {
            if (state != State.IN_REQUEST) {
                return;
            }
            long now = System.nanoTime();
            elapsedMillis = (now - sinceNanos) / 1_000_000L;
            bytes = requestBytes;
            state = State.CUT;
            sinceNanos = now;
            lingerAtClose = true;
            answerBegun = answered;
        }
        cuts.log(LOG, "Closing SOAP connection from {}: request incomplete after {} ms ({} bytes received; a request"
                        + " must arrive within {} ms plus its size at {} bytes/s)", getRemoteSocketAddress(), elapsedMillis,
                bytes, graceNanos / 1_000_000L, minBytesPerSecond);
        if (answerBegun) {   // a 408 after an answer would read as a second one
            close();
            return;
        }
        EndPoint app = getConnection() instanceof SslConnection ssl ? ssl.getSslEndPoint() : this;
        try {
            app.write(Callback.from(this::close, x -> close()), ByteBuffer.wrap(TIMEOUT));
        } catch (RuntimeException e) {   // a write in progress: no clean 408 possible
            LOG.debug("writing 408", e);
            close();
        }
    }

    private void drop() throws IOException {
        ByteBuffer sink = ByteBuffer.allocate(4096);
        while (getChannel().isOpen() && getChannel().read(sink) > 0) {
            sink.clear();
        }
    }

    /**
     * Selectors on which a thread waits for one socket's next bytes; reused, and closed with the
     * connector. A socket registered with Jetty's selector may not block, but it may be watched by
     * a second selector.
     */
    static final class Waiters implements AutoCloseable {
        private final ConcurrentLinkedQueue<Selector> idle = new ConcurrentLinkedQueue<>();
        private final java.util.concurrent.atomic.AtomicInteger inUse = new java.util.concurrent.atomic.AtomicInteger();
        private volatile boolean closed;

        /** Selectors borrowed and not given back; for tests. */
        int inUse() {
            return inUse.get();
        }

        /** Whether the socket has bytes to read (or reached its end) now, without reading them. */
        boolean readableNow(SocketChannel channel) {
            return awaitReadable(channel, 0);
        }

        /** Whether the socket had bytes to read (or reached its end) within the time (0: now); a selector borrowed for the one wait. */
        boolean awaitReadable(SocketChannel channel, long millis) {
            Selector selector = borrow();
            if (selector == null) {
                return false;
            }
            SelectionKey key = null;
            try {
                key = channel.register(selector, SelectionKey.OP_READ);
                return (millis == 0 ? selector.selectNow() : selector.select(millis)) > 0;
            } catch (IOException | RuntimeException e) {   // closed meanwhile: the selector path decides
                return false;
            } finally {
                giveBack(selector, key);
            }
        }

        /** An idle selector, or a new one; null once closed. */
        Selector borrow() {
            if (closed) {
                return null;
            }
            Selector selector = idle.poll();
            try {
                selector = selector != null ? selector : Selector.open();
            } catch (IOException e) {
                return null;
            }
            inUse.incrementAndGet();
            return selector;
        }

        /** Takes a selector back, with its socket's key (if any) cancelled and deregistered. */
        void giveBack(Selector selector, SelectionKey key) {
            inUse.decrementAndGet();
            boolean reusable = true;
            if (key != null) {
                key.cancel();
                try {
                    selector.selectNow();   // deregisters the socket: the selector can take the next one
                } catch (IOException | RuntimeException e) {
                    reusable = false;
                }
            }
            if (reusable && !closed) {
                idle.offer(selector);
                if (closed) {
                    close();   // closed meanwhile: not left open in the queue
                }
            } else {
                IO.close(selector);
            }
        }

        @Override
        public void close() {
            closed = true;
            for (Selector s; (s = idle.poll()) != null; ) {
                IO.close(s);
            }
        }
    }
}
