package io.switchboard.protocol.grpc;

import io.switchboard.codec.message.WireFormatException;
import io.switchboard.codec.proto.ProtoCodec;
import java.time.Duration;
import java.util.ArrayDeque;
import java.util.function.Consumer;
import java.util.function.IntConsumer;
import java.util.function.Supplier;

/**
 * The parts of one incoming message, handed from gRPC's callbacks to the thread that reads them,
 * or read where they arrive ({@link #readOnArrival}: a message of many parts is merged on gRPC's
 * event loop, and the waiting thread is woken once, at its end). Flow control makes it bounded:
 * only {@link #WINDOW} parts are requested ahead and each part read requests one more, so a slow
 * reader slows the sender instead of filling memory. It also bounds what a hostile sender can make
 * the reader do: how many parts per byte, how long between parts ({@code idle}), and how slowly
 * the whole message may arrive ({@link #requireMinRate}).
 */
final class PartQueue {
    /**
     * Parts requested ahead of the reader: as many as the flow-control window holds, so a sender
     * stalls on the window rather than on the reader's requests (with 4, the receiver's reading
     * thread was the stage the whole stream waited for, and a CPU stood idle meanwhile).
     */
    static final int WINDOW = NettyTuning.FLOW_CONTROL_WINDOW / ProtoCodec.PART_BYTES;
    /** Parts any message may use, however small; beyond them, one more per {@link #BYTES_PER_EXTRA_PART} bytes received. */
    static final int FREE_PARTS = 1024;
    static final int BYTES_PER_EXTRA_PART = 1024;
    private static final Object END = new Object();

    private final ArrayDeque<Object> items = new ArrayDeque<>();
    private final IntConsumer request;
    private final long idleNanos;
    private final Supplier<RuntimeException> idleError;
    private final long maxMessageBytes;
    private final long startNanos = System.nanoTime();
    private long minBytesPerSecond;
    private Supplier<RuntimeException> slowError;
    private CallerExecutor caller;
    private Consumer<Part> onArrival;
    private boolean closed;
    private boolean failed;
    private volatile long announced = -1;
    // the reader's side (under this monitor when parts are read on arrival: the waiting thread checks the rate)
    private long received;
    private long parts;
    /** When a part last arrived and was read ({@link #readOnArrival}); the idle time counts from it. */
    private long lastArrival = startNanos;

    PartQueue(IntConsumer request, Duration idle, Supplier<RuntimeException> idleError, long maxMessageBytes) {
        this.request = request;
        this.idleNanos = idle.toNanos();
        this.idleError = idleError;
        this.maxMessageBytes = maxMessageBytes;
    }

    /**
     * Bounds the time the whole message may take: the idle time plus its size (the announced one,
     * or what has arrived) at {@code bytesPerSecond}; a sender that trickles bytes, each within the
     * idle time, cannot hold the reading thread for longer (a slow-loris).
     */
    void requireMinRate(long bytesPerSecond, Supplier<RuntimeException> error) {
        this.minBytesPerSecond = bytesPerSecond;
        this.slowError = error;
    }

    /**
     * The parts arrive from callbacks that {@code caller} runs on the reading thread (a blocking
     * call): the reader runs them while it waits instead of waiting to be notified.
     */
    void arriveOn(CallerExecutor caller) {
        this.caller = caller;
    }

    /**
     * Each part is read by {@code reader} on the thread that adds it (gRPC's event loop), within
     * this queue's limits, instead of being queued: no hand-off to a reading thread per part. The
     * waiting thread's {@link #take} then returns null at the end of the message, or throws the
     * first failure (the reader's included); parts after a failure are released unread and no more
     * are requested. The reader must not block.
     */
    void readOnArrival(Consumer<Part> reader) {
        this.onArrival = reader;
    }

    /** Whether parts are read where they arrive ({@link #readOnArrival}). */
    boolean readsOnArrival() {
        return onArrival != null;
    }

    /** The size the sender announced (its {@code sb-size} header), or -1. */
    void announce(long size) {
        this.announced = size;
    }

    long announced() {
        return announced;
    }

    void add(Part part) {
        if (onArrival != null) {
            readNow(part);
            return;
        }
        synchronized (this) {
            if (!closed) {
                items.add(part);
                notifyAll();
                return;
            }
        }
        part.release(); // the reader is gone: nobody will read it
    }

    private void readNow(Part part) {
        try {
            synchronized (this) {
                if (closed || failed) {
                    part.release(); // the reader is gone or the message already refused: nobody will read it
                    return;
                }
                count(part);
            }
            onArrival.accept(part);
        } catch (RuntimeException e) {
            part.release();
            fail(e);
            return;
        } catch (Error e) {
            // say, no heap for a large message's array: the call fails, not gRPC's event loop (and
            // with it the connection's other calls)
            part.release();
            fail(new IllegalStateException("the message could not be read: " + e, e));
            return;
        }
        synchronized (this) {
            lastArrival = System.nanoTime();
        }
        request.accept(1);
    }

    /** The message is complete: the peer half-closed, or the call ended well. */
    synchronized void end() {
        items.add(END);
        notifyAll();
    }

    /** The call failed: the reader gets {@code error} on its next take, ahead of any part left. */
    synchronized void fail(RuntimeException error) {
        if (failed) {
            return; // the first failure is the message's
        }
        failed = true;
        releaseQueued();
        items.add(error);
        notifyAll();
    }

    /** Whether the message failed: refused by a limit or its reader, or the call ended badly. */
    synchronized boolean failed() {
        return failed;
    }

    /** The reader is done or gives up: parts still queued are dropped. */
    synchronized void close() {
        closed = true;
        releaseQueued();
    }

    private void releaseQueued() {
        for (Object item : items) {
            if (item instanceof Part p) {
                p.release();
            }
        }
        items.clear();
    }

    /**
     * The next part, or null at the end of the message; throws the call's failure or a refusal.
     * When parts are read on arrival, it waits for the end of the message (or its failure).
     */
    Part take() {
        Object item = waitForItem();
        if (item == END) {
            checkAnnounced(); // a part is checked as it is counted
            return null;
        }
        Part part = (Part) item;
        request.accept(1);
        try {
            count(part);
        } catch (WireFormatException e) {
            part.release();
            throw e;
        }
        return part;
    }

    private void checkAnnounced() {
        long size = announced;
        if (size > maxMessageBytes) {
            throw new WireFormatException(WireFormatException.SIZE_LIMIT, "the sender announced " + size
                    + " bytes, over the limit of " + maxMessageBytes + " bytes");
        }
    }

    /** Counts a part against the message's limits: its size and how many parts it may use. */
    private void count(Part part) {
        checkAnnounced();
        parts++;
        received += part.length;
        if (received > maxMessageBytes) {
            throw new WireFormatException(WireFormatException.SIZE_LIMIT, "the message is over the limit of "
                    + maxMessageBytes + " bytes");
        }
        long allowed = FREE_PARTS + received / BYTES_PER_EXTRA_PART;
        if (parts > allowed) {
            throw new WireFormatException(WireFormatException.CHUNK_LIMIT, "more than " + allowed + " parts for "
                    + received + " bytes");
        }
    }

    private long messageTimeLeft(long now) {
        if (minBytesPerSecond <= 0) {
            return Long.MAX_VALUE;
        }
        long size = Math.max(received, Math.min(announced, maxMessageBytes));
        return startNanos + idleNanos + size * 1_000_000_000L / minBytesPerSecond - now;
    }

    private Object waitForItem() {
        Object item;
        synchronized (this) {
            long start = System.nanoTime();
            if (messageTimeLeft(start) <= 0) {
                throw slowError.get();
            }
            while (items.isEmpty()) {
                long now = System.nanoTime();
                long left = messageTimeLeft(now);
                if (left <= 0) {
                    throw slowError.get();
                }
                // parts read on arrival are progress too: the idle time counts from the latest
                long idleDeadline = Math.max(start, lastArrival) + idleNanos;
                if (idleDeadline - now <= 0) {
                    throw idleError.get();
                }
                long wait = Math.min(idleDeadline - now, left);
                try {
                    if (caller != null) {
                        caller.runWaiting(wait); // its callbacks add here: this thread holds the monitor already
                    } else {
                        wait(wait / 1_000_000, (int) (wait % 1_000_000));
                    }
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                    throw new CallInterruptedException();
                }
            }
            item = items.peek();
            if (item instanceof Part) {
                items.poll();
            }
        }
        if (item instanceof RuntimeException e) {
            throw e;
        }
        return item;
    }

    /** The reading thread was interrupted: the call is being abandoned. */
    static final class CallInterruptedException extends RuntimeException {
        CallInterruptedException() {
            super("interrupted", null, false, false);
        }
    }
}
