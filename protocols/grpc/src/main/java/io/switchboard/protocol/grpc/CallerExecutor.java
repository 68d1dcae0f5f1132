package io.switchboard.protocol.grpc;

import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.Executor;
import java.util.concurrent.locks.LockSupport;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The executor of one blocking call's gRPC callbacks: the calling thread runs them itself while it
 * waits for the response ({@link #runWaiting}), as grpc-java's blocking stub does with its
 * {@code ThreadlessExecutor}. The event loop only queues a callback and unparks the caller, if it
 * is parked; the response is parsed and merged on the caller's thread, and no monitor is handed
 * between the two. Once the call is over ({@link #shutdown}), a late callback runs where it is
 * executed, so a part that arrives after the caller left is still released.
 */
final class CallerExecutor implements Executor {
    private static final Logger LOG = LoggerFactory.getLogger(CallerExecutor.class);
    private static final Object DONE = new Object();

    private final ConcurrentLinkedQueue<Runnable> tasks = new ConcurrentLinkedQueue<>();
    /** The parked caller, {@link #DONE}, or null while the caller is busy. */
    private volatile Object waiter;

    @Override
    public void execute(Runnable task) {
        tasks.add(task);
        Object w = waiter;
        if (w == DONE) {
            if (tasks.remove(task)) {
                runQuietly(task);
            }
        } else if (w != null) {
            LockSupport.unpark((Thread) w);
        }
    }

    /**
     * Runs the callbacks queued, or parks up to {@code nanos} for one and runs what came. Returns
     * early, like {@code Object.wait}: the caller checks its condition again. Caller's thread only.
     */
    void runWaiting(long nanos) throws InterruptedException {
        Runnable task = tasks.poll();
        if (task == null) {
            waiter = Thread.currentThread();
            try {
                task = tasks.poll();
                if (task == null) {
                    LockSupport.parkNanos(this, nanos);
                    if (Thread.interrupted()) {
                        throw new InterruptedException();
                    }
                    task = tasks.poll();
                }
            } finally {
                waiter = null;
            }
        }
        for (; task != null; task = tasks.poll()) {
            runQuietly(task);
        }
    }

    /** The caller is done with the call: runs what is queued; later callbacks run where they are executed. */
    void shutdown() {
        waiter = DONE;
        for (Runnable task = tasks.poll(); task != null; task = tasks.poll()) {
            runQuietly(task);
        }
    }

    private static void runQuietly(Runnable task) {
        try {
            task.run();
        } catch (RuntimeException e) {
            LOG.warn("a gRPC callback failed", e);
        }
    }
}
