package io.switchboard.protocol.grpc;

import io.switchboard.protocol.DaemonThreads;
import java.time.Duration;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.Executor;
import java.util.concurrent.Executors;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Admits the server's calls and starts their workers. A call is admitted when it starts (over
 * {@code max} calls admitted it is refused as busy at once, as before), but its worker thread is
 * woken only once the request is in (its one part and the half-close), or once it shows more parts
 * coming: a worker woken at the call's headers found no part yet and slept again in the part queue,
 * a second wake-up on every small call. A call whose request stalls (headers and nothing else, or a
 * first part and then silence) is started by a sweep once it has waited {@link #LATE}, so the part
 * queue's idle and minimum-rate limits still bound it.
 */
final class WorkerGate implements AutoCloseable {
    private static final Logger LOG = LoggerFactory.getLogger(WorkerGate.class);
    /** How long a call may wait for its request before its worker starts anyway. */
    static final Duration LATE = Duration.ofSeconds(1);

    private final Executor workers;
    private final int max;
    private final AtomicInteger admitted = new AtomicInteger();
    /** Calls not known to be started, oldest first; the sweep drops the started ones. */
    private final ConcurrentLinkedQueue<Ticket> waiting = new ConcurrentLinkedQueue<>();
    private final ScheduledExecutorService sweeper;
    private final AtomicLong lateStarts = new AtomicLong();

    WorkerGate(Executor workers, int max) {
        this(workers, max, true);
    }

    /** Without a sweeping thread of its own when {@code sweeping} is false (tests call {@link #sweep}). */
    WorkerGate(Executor workers, int max, boolean sweeping) {
        this.workers = workers;
        this.max = max;
        this.sweeper = Executors.newSingleThreadScheduledExecutor(DaemonThreads.named("grpc-call-sweep"));
        if (sweeping) {
            long period = LATE.toNanos() / 2;
            sweeper.scheduleAtFixedRate(() -> sweep(System.nanoTime()), period, period, TimeUnit.NANOSECONDS);
        }
    }

    /**
     * A ticket for a new call, or null when {@code max} calls are admitted (busy). {@code work} runs
     * on a worker once {@link Ticket#start} is called; {@code refuse} runs instead if no worker can
     * take it then.
     */
    Ticket admit(Runnable work, Runnable refuse) {
        if (admitted.incrementAndGet() > max) {
            admitted.decrementAndGet();
            return null;
        }
        Ticket t = new Ticket(work, refuse);
        waiting.add(t);
        return t;
    }

    /** Calls admitted and not finished; for tests. */
    int admitted() {
        return admitted.get();
    }

    /** Calls the sweep started because their request stalled; for tests and logs. */
    long lateStarts() {
        return lateStarts.get();
    }

    /**
     * Forgets the started calls at the head of the queue and starts those admitted {@link #LATE}
     * before {@code now}. One call's failure to start (its refusal throws) is logged and the sweep
     * goes on: out of the scheduled sweep, it would cancel every later sweep, and every stalled
     * call from then on would hold its place until its client left.
     */
    void sweep(long now) {
        for (Ticket t = waiting.peek(); t != null && (t.started.get() || now - t.admittedAt >= LATE.toNanos());
                t = waiting.peek()) {
            waiting.poll();
            try {
                if (t.start()) {
                    lateStarts.incrementAndGet();
                }
            } catch (RuntimeException e) {
                LOG.warn("a gRPC call whose request stalled could not be started or refused; the sweep goes on", e);
            }
        }
    }

    @Override
    public void close() {
        sweeper.shutdownNow();
    }

    /** One admitted call: started once, or abandoned (cancelled before it started). */
    final class Ticket {
        private final long admittedAt = System.nanoTime();
        private final AtomicBoolean started = new AtomicBoolean();
        /** Dropped once started or abandoned: the sweep's queue holds a finished call's ticket for up to {@link #LATE}. */
        private Runnable work;
        private Runnable refuse;

        private Ticket(Runnable work, Runnable refuse) {
            this.work = work;
            this.refuse = refuse;
        }

        /** Wakes a worker for the call, unless it was started or abandoned already (then false). Any thread. */
        boolean start() {
            if (!started.compareAndSet(false, true)) {
                return false;
            }
            Runnable work = this.work;
            Runnable refuse = this.refuse;
            this.work = null;
            this.refuse = null;
            try {
                workers.execute(() -> {
                    try {
                        work.run();
                    } finally {
                        admitted.decrementAndGet();
                    }
                });
            } catch (RejectedExecutionException e) {
                // every worker thread is still finishing a call (or the server closes): busy, as at admission
                admitted.decrementAndGet();
                refuse.run();
            }
            return true;
        }

        /** The call ended before its worker started (cancelled): it no longer counts. */
        void abandon() {
            if (started.compareAndSet(false, true)) {
                work = null;
                refuse = null;
                admitted.decrementAndGet();
            }
        }

    }
}
