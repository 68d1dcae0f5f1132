package io.switchboard.protocol.tcp;

import io.netty.buffer.Unpooled;
import io.netty.buffer.ByteBuf;
import io.switchboard.protocol.DaemonThreads;
import io.switchboard.protocol.TransportException;
import io.switchboard.protocol.spi.TlsRefusals;
import io.switchboard.protocol.spi.UnixSockets;
import java.io.IOException;
import java.net.SocketTimeoutException;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.Executor;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.ScheduledThreadPoolExecutor;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.locks.LockSupport;
import java.util.concurrent.locks.ReentrantLock;

/**
 * A client's connection to one server: a plain blocking socket (TLS: an {@code SSLSocket}; on the
 * same host: a Unix domain socket, see {@link Wire}) shared
 * by every call to that server, calls told apart by correlation id. No thread of its own sits
 * between a caller and the socket:
 * <ul>
 * <li>a caller writes its request frame itself, in one write, under the write lock;</li>
 * <li>a blocking caller waiting for its answer reads the socket itself when nobody else does (the
 * <em>leader</em>): it reads frames, hands each to its call (waking that call's caller if it is
 * someone else's) and stops at its own. One blocking call at a time thus costs what a call over a
 * raw socket costs: the kernel wakes the caller when the answer arrives. When the leader leaves
 * with calls still under way, it wakes one of their callers to read next (a follower);</li>
 * <li>answers of non-blocking calls, with no caller waiting, are read by a reader task on the
 * client's executor, started when such a call is under way and nobody reads.</li>
 * <li>the answers of non-blocking calls that one read brings in are settled together, in order, by
 * one task on the client's executor ({@link Answer}): one hand-off per read, not per answer. The
 * non-blocking calls that task's callbacks send to this server leave in one write when it ends
 * (a blocking one, or a cancel, takes them along at once), so a caller that keeps many calls in
 * flight costs a write and a wake-up per batch, not per call.</li>
 * </ul>
 * Frames are cut by the same {@link FrameDecoder} as the server's, within the same limits.
 */
final class ClientConnection {
    /** Writes up to this size fit a socket's buffers and are not watched ({@link #send}). */
    static final int WATCHED_WRITE_BYTES = 64 << 10;
    /** Closes connections whose large writes outlast their calls' deadlines, or whose TLS records their reads' ({@link Wire#of}). */
    static final ScheduledThreadPoolExecutor WATCH = watcher();

    private static ScheduledThreadPoolExecutor watcher() {
        ScheduledThreadPoolExecutor e = new ScheduledThreadPoolExecutor(1, DaemonThreads.named("tcp-client-watch"));
        e.setRemoveOnCancelPolicy(true);
        return e;
    }

    /**
     * Answers up to this size are copied out of the receive buffer, which the next read then reuses;
     * a larger one keeps its slice, and the next read starts a new buffer.
     */
    static final int COPIED_ANSWER_BYTES = 16 << 10;

    /** How long a reader with nothing of its own to wait for blocks in one read before looking around. */
    private static final int READER_POLL_MILLIS = 1000;

    private final String address;
    private final Wire wire;
    private final Executor readers;
    private final AtomicLong ids = new AtomicLong();
    private final Map<Long, Call> calls = new ConcurrentHashMap<>();
    private final ReentrantLock writing = new ReentrantLock();
    private final ReentrantLock reading = new ReentrantLock();
    /** Whether an answer has come: a failure after it cannot be the handshake's refusal. */
    private volatile boolean answeredOnce;
    private final AtomicBoolean readerTask = new AtomicBoolean();
    /** Cuts frames; it and {@link #received} are used only by the thread holding {@link #reading}. */
    private final FrameDecoder decoder;
    /** Bytes read and not yet cut into frames; frames' data are slices of it. */
    private ByteBuf received = Unpooled.buffer(64 << 10);
    private final List<Object> frames = new ArrayList<>();
    /** Non-blocking calls whose answers the current read brought in; used by the reading thread only. */
    private final List<Call> answered = new ArrayList<>();
    /** The writes held back on this thread while it settles a batch of answers, if it does. */
    private static final ThreadLocal<Cork> CORK = new ThreadLocal<>();
    private volatile boolean closed;
    /**
     * The server said it closes this connection after an answer (a request over its frame limit,
     * {@link TcpErrors#CLOSING}), so no new call is sent on it.
     */
    private volatile boolean retiring;
    private volatile Throwable failure;
    private volatile long lastUsedNanos = System.nanoTime();

    /**
     * What a non-blocking call does with its answer, on the client's executor, in the task that
     * settles the answers one read brought in.
     */
    interface Answer {
        /** The call's answer; the receiver frees the frame. */
        void answered(Frame frame);

        /** The executor refused the task that was to read the answer (the frame is freed already). */
        void unread(RejectedExecutionException refused);
    }

    /** A call under way: completed with its answer's frame by whichever thread reads it. */
    static final class Call extends CompletableFuture<Frame> {
        final long id;
        final String what;
        /** A non-blocking call's step for its answer, or null: a blocking call, whose caller reads it. */
        final Answer answer;
        /** The thread blocked waiting for this call, or null (a non-blocking call). */
        volatile Thread waiter;

        Call(long id, String what, Answer answer) {
            this.id = id;
            this.what = what;
            this.answer = answer;
        }

        /** Frees the answer if it arrived: for a caller that will not read it, after {@link #forget}. */
        void dropAnswer() {
            if (isDone() && !isCompletedExceptionally()) {
                join().release();
            }
        }
    }

    ClientConnection(String address, Wire wire, TcpLimits limits, Executor readers) {
        this.address = address;
        this.wire = wire;
        this.readers = readers;
        this.decoder = new FrameDecoder(limits.maxFrameBytes(), limits.maxMetaBytes());
    }

    String address() {
        return address;
    }

    /** {@link UnixSockets#VIA_TCP} or {@link UnixSockets#VIA_UNIX}. */
    String via() {
        return wire.via();
    }

    boolean usable(long maxIdleNanos) {
        return !closed && !retiring && (!calls.isEmpty() || System.nanoTime() - lastUsedNanos < maxIdleNanos);
    }

    /** A new blocking call's id and the future its answer completes; not yet sent. */
    Call open(String what) {
        return open(what, null);
    }

    /** A new call: blocking if {@code answer} is null, else non-blocking, its answer settled by {@code answer}. */
    Call open(String what, Answer answer) {
        Call c = new Call(ids.incrementAndGet(), what, answer);
        calls.put(c.id, c);
        return c;
    }

    /**
     * Writes a call's request frame. On failure the call is forgotten and the exception says the
     * request was not delivered (a frame cut short is never run), and the connection is closed. A
     * frame larger than {@link #WATCHED_WRITE_BYTES} that is still being written at
     * {@code deadlineNanos} (a server that stopped reading) closes the connection. A non-blocking
     * call's frame sent while this thread settles a batch of this connection's answers is held and
     * written with the batch's others when the batch ends; if that write fails, its call fails as
     * not delivered.
     */
    void send(Call call, byte[] frame, int length, long deadlineNanos) {
        lastUsedNanos = System.nanoTime();
        Cork cork = CORK.get();
        if (cork != null && cork.connection == this) {
            if (call.answer != null && cork.hold(call, frame, length)) {
                return;   // leaves with the batch's other requests when the batch ends
            }
            flush(cork);   // the held requests go first: a blocking call may wait for answers to them
        }
        writing.lock();
        ScheduledFuture<?> watch = null;
        try {
            if (closed) {
                throw new IOException("the connection to " + address + " is closed", failure);
            }
            if (length > WATCHED_WRITE_BYTES) {
                watch = WATCH.schedule(() -> close(new IOException("the request was still being written when "
                        + call.what + " reached its deadline")), deadlineNanos - System.nanoTime(), TimeUnit.NANOSECONDS);
            }
            wire.write(frame, 0, length);
        } catch (IOException e) {
            calls.remove(call.id);
            close(e);
            throw new TransportException(TcpProtocolProvider.NAME, TransportException.Delivery.NOT_DELIVERED,
                    "cannot send " + call.what + " to " + address + ": " + e.getMessage(), e);
        } finally {
            if (watch != null) {
                watch.cancel(false);
            }
            writing.unlock();
        }
    }

    /** Writes a frame that expects no answer (a cancel); a failure closes the connection, quietly. */
    void sendQuietly(byte[] frame) {
        Cork cork = CORK.get();
        if (cork != null && cork.connection == this) {
            flush(cork);   // a cancel must not overtake the request it cancels
        }
        writing.lock();
        try {
            if (!closed) {
                wire.write(frame, 0, frame.length);
            }
        } catch (IOException e) {
            close(e);
        } finally {
            writing.unlock();
        }
    }

    /**
     * Forgets a call: an answer that comes later is dropped, and the call's future fails with a
     * {@link java.util.concurrent.CancellationException}. Whether it was still under way. An answer
     * that arrived before stays in the future, for whoever holds it ({@link Call#dropAnswer}).
     */
    boolean forget(Call call) {
        boolean underWay = calls.remove(call.id) != null;
        call.completeExceptionally(new java.util.concurrent.CancellationException());
        return underWay;
    }

    /**
     * Blocks until {@code call}'s answer is in, reading the socket itself whenever no other thread
     * does.
     *
     * @throws TimeoutException     no answer by {@code deadlineNanos} ({@link System#nanoTime()})
     * @throws InterruptedException the caller was interrupted
     */
    Frame await(Call call, long deadlineNanos) throws TimeoutException, InterruptedException {
        call.waiter = Thread.currentThread();   // before trying to lead: a leader leaving now sees it
        try {
            while (true) {
                if (call.isDone()) {
                    return call.join();
                }
                long left = deadlineNanos - System.nanoTime();
                if (left <= 0) {
                    throw new TimeoutException();
                }
                if (reading.tryLock()) {
                    try {
                        lead(call, deadlineNanos);
                    } finally {
                        reading.unlock();
                        handOff();
                    }
                } else {
                    LockSupport.parkNanos(this, left);   // woken by the answer, or to lead
                    if (Thread.interrupted()) {
                        throw new InterruptedException();
                    }
                }
            }
        } finally {
            call.waiter = null;
        }
    }

    /** Reads frames until {@code mine} is done (null: while calls are under way), or its deadline passes. */
    private void lead(Call mine, long deadlineNanos) {
        while (!closed && (mine == null ? !calls.isEmpty() : !mine.isDone())) {
            long left = mine == null ? READER_POLL_MILLIS : (deadlineNanos - System.nanoTime()) / 1_000_000;
            if (left <= 0) {
                return;
            }
            try {
                makeRoom(Math.max(16 << 10, decoder.missingBytes(received)));
                int n = wire.read(received.array(), received.arrayOffset() + received.writerIndex(),
                        received.writableBytes(), (int) Math.min(Integer.MAX_VALUE, Math.max(1, left)));
                if (n < 0) {
                    close(new IOException("the server closed the connection"));
                    return;
                }
                received.writerIndex(received.writerIndex() + n);
                cut();
            } catch (SocketTimeoutException timeout) {
                if (mine != null) {
                    return;
                }
            } catch (IOException | RuntimeException e) {
                close(e);   // a broken frame or a broken socket: the stream cannot go on
                return;
            }
        }
    }

    /**
     * Makes room in {@link #received} for {@code wanted} more bytes: for a large frame, a buffer over
     * a kept array ({@link FrameArrays}) that goes back when the frame's call has read it, rather
     * than a new array of the frame's size for every large answer.
     */
    private void makeRoom(int wanted) {
        if (received.writableBytes() >= wanted) {
            return;
        }
        long size = (long) received.readableBytes() + wanted;
        if (size < FrameArrays.MIN_KEPT_BYTES || size > Integer.MAX_VALUE - 8) {
            received.ensureWritable(wanted);
            return;
        }
        ByteBuf larger = FrameArrays.SHARED.heapBuffer(FrameArrays.SHARED.take((int) size), Integer.MAX_VALUE);
        larger.writeBytes(received);
        received.release();   // frames still reading their data from it keep it until they are done
        received = larger;
    }

    /** Cuts the frames {@link #received} holds and hands them on; keeps a frame's start for the next read. */
    private void cut() {
        while (true) {
            int before = received.readableBytes();
            int cut = frames.size();
            decoder.cut(received, frames);
            if (frames.size() == cut && received.readableBytes() == before) {
                break;   // a frame's start, waiting for the rest
            }
        }
        for (Object f : frames) {
            dispatch(((Frame) f).detached(COPIED_ANSWER_BYTES));
        }
        frames.clear();
        if (!answered.isEmpty()) {
            settleAnswered();
        }
        if (!received.isReadable()) {
            if (received.refCnt() == 1) {
                received.clear();   // no frame's data points into it: reuse it from the start
            } else {
                received.release();   // frames still read their data from it; they free it
                received = Unpooled.buffer(64 << 10);
            }
        } else if (received.refCnt() == 1 && received.readerIndex() > received.capacity() / 2) {
            received.discardReadBytes();
        }
    }

    private void dispatch(Frame frame) {
        lastUsedNanos = System.nanoTime();
        if (!answeredOnce) {
            answeredOnce = true;   // the handshake, if any, is behind this connection
        }
        if (frame.meta.userField(TcpErrors.CLOSING) != null) {
            retiring = true;   // before its caller hears of it: its next call goes on another connection
        }
        Call c = calls.remove(frame.meta.correlationId());
        if (c == null || !c.complete(frame)) {
            frame.release();   // cancelled or timed out: nobody waits for it
            return;
        }
        if (c.answer != null) {
            answered.add(c);
            return;
        }
        Thread w = c.waiter;
        if (w != null && w != Thread.currentThread()) {
            LockSupport.unpark(w);
        }
    }

    /** Hands the non-blocking calls' answers of this read to one task on the client's executor. */
    private void settleAnswered() {
        List<Call> batch = new ArrayList<>(answered);
        answered.clear();
        try {
            readers.execute(() -> settle(batch));
        } catch (RejectedExecutionException e) {
            for (Call c : batch) {
                c.join().release();
                c.answer.unread(e);
            }
        }
    }

    /**
     * Settles answers in order; the non-blocking requests their callbacks send here are held and
     * written together at the end.
     */
    private void settle(List<Call> batch) {
        Cork outer = CORK.get();   // a caller's executor that runs tasks in place may nest batches
        Cork cork = new Cork(this);
        CORK.set(cork);
        try {
            for (Call c : batch) {
                c.answer.answered(c.join());
            }
        } finally {
            if (outer == null) {
                CORK.remove();
            } else {
                CORK.set(outer);
            }
            flush(cork);
        }
    }

    /** Writes the requests a batch held back. If they cannot be written, their calls fail as not delivered. */
    private void flush(Cork cork) {
        if (cork.size == 0) {
            return;
        }
        writing.lock();
        try {
            if (closed) {
                throw new IOException("the connection to " + address + " is closed", failure);
            }
            wire.write(cork.bytes, 0, cork.size);
        } catch (IOException e) {
            for (Call c : cork.held) {
                if (calls.remove(c.id) != null) {
                    c.completeExceptionally(new TransportException(TcpProtocolProvider.NAME,
                            TransportException.Delivery.NOT_DELIVERED, "cannot send " + c.what + " to " + address
                            + ": " + e.getMessage(), e));
                }
            }
            close(e);
        } finally {
            writing.unlock();
            cork.clear();
        }
    }

    /** Requests held back on one thread while it settles a batch of this connection's answers. */
    private static final class Cork {
        final ClientConnection connection;
        final List<Call> held = new ArrayList<>();
        byte[] bytes = new byte[4 << 10];
        int size;

        Cork(ClientConnection connection) {
            this.connection = connection;
        }

        /** Holds a small request; false if it is too large to hold (write it yourself). */
        boolean hold(Call call, byte[] frame, int length) {
            if (length > WATCHED_WRITE_BYTES) {
                return false;
            }
            if (size + length > WATCHED_WRITE_BYTES) {
                connection.flush(this);
            }
            if (size + length > bytes.length) {
                bytes = java.util.Arrays.copyOf(bytes, Math.max(size + length, bytes.length * 2));
            }
            System.arraycopy(frame, 0, bytes, size, length);
            size += length;
            held.add(call);
            return true;
        }

        void clear() {
            size = 0;
            held.clear();
        }
    }

    /**
     * After a reader leaves: if calls are under way, one of their blocked callers reads next, or,
     * when none blocks, a reader task does.
     */
    private void handOff() {
        if (closed || calls.isEmpty() || reading.isLocked()) {
            return;
        }
        Thread me = Thread.currentThread();   // a leader leaving at its deadline still waits for its own call
        for (Call c : calls.values()) {
            Thread w = c.waiter;
            if (w != null && w != me) {
                LockSupport.unpark(w);
                return;
            }
        }
        startReader();
    }

    /** Makes sure someone reads while a non-blocking call is under way. */
    void ensureReader() {
        if (!reading.isLocked()) {
            handOff();
        }
    }

    private void startReader() {
        if (!readerTask.compareAndSet(false, true)) {
            return;
        }
        try {
            readers.execute(() -> {
                try {
                    if (reading.tryLock()) {
                        try {
                            lead(null, 0);
                        } finally {
                            reading.unlock();
                        }
                    }
                } finally {
                    readerTask.set(false);
                    handOff();
                }
            });
        } catch (RejectedExecutionException e) {
            readerTask.set(false);
            close(e);
        }
    }

    /**
     * Closes the connection; calls under way fail as may-have-run (their requests were written), or
     * as not delivered if the server refused the TLS handshake ({@link TlsRefusals}) before any
     * answer came.
     */
    void close(Throwable cause) {
        if (closed) {
            return;
        }
        failure = cause;
        closed = true;
        try {
            wire.close();
        } catch (IOException ignored) {
            // closing anyway
        }
        boolean refused = !answeredOnce && TlsRefusals.refusedHandshake(cause);
        for (Call c : calls.values()) {
            calls.remove(c.id);
            if (c.completeExceptionally(new TransportException(TcpProtocolProvider.NAME, refused
                    ? TransportException.Delivery.NOT_DELIVERED : TransportException.Delivery.MAY_HAVE_RUN,
                    (refused ? address + " refused this client's TLS handshake; nothing of " + c.what + " ran"
                    : "the connection to " + address + " closed before the answer to " + c.what + " arrived")
                    + (cause == null ? "" : ": " + cause.getMessage()), cause))) {
                Thread w = c.waiter;
                if (w != null) {
                    LockSupport.unpark(w);
                }
            }
        }
    }
}
