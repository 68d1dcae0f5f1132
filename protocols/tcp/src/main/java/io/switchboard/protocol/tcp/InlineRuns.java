package io.switchboard.protocol.tcp;

import java.util.concurrent.atomic.AtomicInteger;

/**
 * Whether the next call of one operation runs on the event loop that read it, rather than on a
 * worker thread: it does once {@link #FAST_RUNS} of the operation's runs on workers each took at
 * most {@code maxNanos} (decoding, running and encoding, not writing), and its request is small.
 * A run on the event loop costs no hand-off to a worker and none back to the loop to write the
 * answer. A slow run on a worker (a cold JIT, a worker that lost its CPU for a while) does not
 * count; an operation that is always slow never gets there. A run on the event loop over
 * {@link #STALL_NANOS}, or {@link #STRIKES} slow ones there not outweighed by fast ones, send the
 * operation's next {@link #BACK_OFF_CALLS} calls to workers and start the count again, so an
 * operation that blocks now and then (I/O, a lock, a long computation) holds up the other
 * connections of its event loop once in a while, not on every call. Thread-safe; counts are approximate
 * under races, which only moves a call between the two paths.
 */
final class InlineRuns {
    /** Consecutive fast runs before an operation's calls run on the event loop. */
    static final int FAST_RUNS = 16;
    /** Calls sent to workers after a slow run, before the operation is watched again. */
    static final int BACK_OFF_CALLS = 1000;
    /**
     * Slow runs on the event loop, not outweighed by fast ones, before the operation goes back to
     * workers: a thread that lost its CPU to another process looks slow too, once in a while.
     */
    static final int STRIKES = 3;
    /**
     * A run on the event loop longer than this sends the operation back at once: longer than a
     * busy machine's scheduler keeps a thread from its CPU (a few time slices).
     */
    static final long STALL_NANOS = 20_000_000;
    /** Requests larger than this are read on a worker: decoding them would hold up the loop. */
    static final int MAX_INLINE_REQUEST_BYTES = 64 << 10;

    private final long maxNanos;
    private final AtomicInteger fastRuns = new AtomicInteger();
    private final AtomicInteger backOff = new AtomicInteger();
    /** Slow runs on the event loop not yet outweighed by fast ones. */
    private final AtomicInteger strikes = new AtomicInteger();

    /** {@code maxNanos} 0: never inline. */
    InlineRuns(long maxNanos) {
        this.maxNanos = maxNanos;
    }

    /** Whether a call with a request of {@code requestBytes} runs on the event loop. */
    boolean inline(int requestBytes) {
        if (maxNanos == 0 || requestBytes > MAX_INLINE_REQUEST_BYTES || fastRuns.get() < FAST_RUNS) {
            return false;
        }
        if (backOff.get() > 0) {
            backOff.decrementAndGet();
            return false;
        }
        return true;
    }

    /** A run of the operation took {@code nanos}, on the event loop ({@code inline}) or a worker. */
    void ran(long nanos, boolean inline) {
        if (maxNanos == 0) {
            return;
        }
        if (nanos <= maxNanos) {
            if (fastRuns.get() < FAST_RUNS) {
                fastRuns.incrementAndGet();
            }
            if (inline && strikes.get() > 0) {
                strikes.decrementAndGet();
            }
        } else if (inline && (nanos > Math.max(STALL_NANOS, maxNanos) || strikes.incrementAndGet() >= STRIKES)) {
            strikes.set(0);
            fastRuns.set(0);
            backOff.set(BACK_OFF_CALLS);
        }
    }
}
