package io.switchboard.testing;

import io.switchboard.protocol.DaemonThreads;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.LockSupport;

/**
 * How long this JVM's threads waited for a CPU, measured: a daemon thread asks to wake every
 * millisecond and records how much later than asked it ran. A thread of the product that must
 * wake in time (a deadline's timer, a cancel's reader) waits as long on a starved machine, and a
 * stop-the-world pause stops both. A test holding the product to a latency target allows for
 * what this saw in the same window, and for nothing else: on a quiet machine the allowance is
 * close to zero and the target is the bound.
 *
 * <pre>{@code
 * try (SchedulerLag lag = SchedulerLag.start()) {
 *     long from = System.nanoTime();
 *     ... // the product acts; it was told at `to`
 *     assertTrue(to - from <= TimeUnit.MILLISECONDS.toNanos(50) + 2 * lag.within(from, to));
 * }
 * }</pre>
 */
public final class SchedulerLag implements AutoCloseable {
    private static final long TICK_NANOS = TimeUnit.MILLISECONDS.toNanos(1);
    /** Later than this is lateness; below it is the timer's ordinary slack. */
    private static final long SLACK_NANOS = TimeUnit.MICROSECONDS.toNanos(200);

    /** A wake-up that came late: it was due at {@code due} and ran at {@code ran} (nanoTime). */
    private record Late(long due, long ran) {
    }

    private final List<Late> late = new ArrayList<>();
    private final Thread watcher;
    private volatile boolean closed;
    /** When the last tick done began; {@link #within} waits for one that began after its window. */
    private long lastTickStart = System.nanoTime();

    private SchedulerLag() {
        watcher = DaemonThreads.named("scheduler-lag").newThread(this::watch);
    }

    /** Starts watching; close it when the test is done. */
    public static SchedulerLag start() {
        SchedulerLag lag = new SchedulerLag();
        lag.watcher.start();
        return lag;
    }

    private void watch() {
        while (!closed) {
            long start = System.nanoTime();
            LockSupport.parkNanos(TICK_NANOS);
            long ran = System.nanoTime();
            long due = start + TICK_NANOS;
            synchronized (this) {
                if (ran - due > SLACK_NANOS) {
                    late.add(new Late(due, ran));
                }
                lastTickStart = start;
                notifyAll();
            }
        }
    }

    /**
     * The time between {@code from} and {@code to} ({@link System#nanoTime()}) during which the
     * watcher was due to run and did not: waits until it has run after {@code to}, so that a
     * wait under way at {@code to} counts.
     */
    public synchronized long within(long from, long to) {
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(60);
        while (lastTickStart - to < 0 && !closed) {
            long left = deadline - System.nanoTime();
            if (left <= 0) {
                throw new IllegalStateException("the lag watcher did not run for 60 s");
            }
            try {
                TimeUnit.NANOSECONDS.timedWait(this, left);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                throw new IllegalStateException("interrupted", e);
            }
        }
        long sum = 0;
        for (Late l : late) {
            long start = Math.max(l.due, from);
            long end = Math.min(l.ran, to);
            if (end > start) {
                sum += end - start;
            }
        }
        return sum;
    }

    /** {@link #within} in milliseconds. */
    public double millisWithin(long from, long to) {
        return within(from, to) / 1e6;
    }

    @Override
    public void close() {
        closed = true;
        watcher.interrupt();
    }
}
