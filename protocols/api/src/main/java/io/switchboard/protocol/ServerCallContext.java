package io.switchboard.protocol;

import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Objects;
import java.util.concurrent.Callable;
import java.util.concurrent.Executor;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.ScheduledThreadPoolExecutor;
import java.util.concurrent.TimeUnit;
import java.util.function.BooleanSupplier;

/**
 * The call a component's operation runs in, as the operation (and the calls it makes) can ask
 * about it: whether the caller has cancelled it, when its deadline passes, and the trace context
 * it arrived with. Protocol servers make one per call and enter it on the thread that runs the
 * operation; outside of one, {@link #isCancelled()} says whether the running thread was
 * interrupted.
 *
 * <p>Deadlines and cancellation follow a call across hops, in the manner of grpc-java's
 * {@code Context}: every protocol carries the time left with each call (gRPC's
 * {@code grpc-timeout}, SOAP's {@code sb:deadline} header, tcp's {@code timeout_ms}, local's call
 * options), the server fixes it as {@link #deadline()} and cancels the call when it passes, and a
 * meta-stub call made on the operation's thread inherits the time left (never more) and is
 * cancelled when this call is ({@link #onCancel}).
 *
 * <p>What a server notices as a cancel, per protocol: gRPC — the client cancelled the call, its
 * deadline passed or its connection dropped; tcp — a cancel frame, the timeout or the connection
 * closing; SOAP — the client's cancel message (by call id), or the deadline; local — the caller's
 * future cancelled. In each case {@link #isCancelled()} turns true, the operation's thread is
 * interrupted, and the calls it has under way through meta-stubs are cancelled in turn.
 *
 * <p>The call is the current thread's: work an operation hands to another thread takes it along
 * through {@link #propagating(Executor)} or {@link #wrap(Runnable)}, as grpc-java's
 * {@code Context.currentContextExecutor} does.
 *
 * <pre>{@code
 * public long spin(double[] values, int maxRounds) {
 *     long rounds = 0;
 *     while (rounds < maxRounds && !ServerCallContext.isCancelled()) {
 *         rounds++;   // a slice of the work
 *     }
 *     return rounds;
 * }
 * }</pre>
 *
 * <p>A protocol server, per call:
 *
 * <pre>{@code
 * ServerCallContext call = ServerCallContext.create(System.nanoTime() + timeoutNanos, trace).cancelAtDeadline();
 * try (ServerCallContext.Scope scope = call.enter()) {
 *     response = skeleton.invoke(op, request, callId);
 * }
 * // from another thread, when the client cancels:  call.cancel();
 * }</pre>
 */
public final class ServerCallContext {
    private static final ThreadLocal<ServerCallContext> CURRENT = new ThreadLocal<>();
    /** Fires deadlines; one daemon thread, whose work is to flag calls and run their short cancel listeners. */
    private static final ScheduledThreadPoolExecutor TIMER;
    /**
     * How often the timer's thread wakes with no deadline due. A task that becomes the first of the
     * timer's queue wakes its thread (to wait for the new first); with this tick always first, a
     * call's deadline of a second or more is queued without a wake-up, and without the context
     * switch that would cost the call's CPU on a busy machine. Shorter deadlines wake it as before.
     */
    static final long TICK_MILLIS = 1000;

    static {
        TIMER = new ScheduledThreadPoolExecutor(1, DaemonThreads.named("switchboard-deadlines"));
        TIMER.setRemoveOnCancelPolicy(true);
        TIMER.scheduleAtFixedRate(() -> { }, TICK_MILLIS, TICK_MILLIS, TimeUnit.MILLISECONDS);
    }

    private final boolean hasDeadline;
    private final long deadlineNanos;
    private final TraceContext trace;
    private final Peer peer;
    /** The protocol's own flag, for servers that keep one ({@link #enter(BooleanSupplier, TraceContext)}); may be null. */
    private final BooleanSupplier cancelledBy;
    private volatile boolean cancelled;
    /** The TLS settings and session the call came with; null: nothing to check ({@link #trustedBy}). */
    private TlsSettings tls;
    private javax.net.ssl.SSLSession session;
    /** Guarded by this: the thread in the call's scope, the cancel listeners, the deadline's timer. */
    private Thread thread;
    private List<Runnable> listeners;
    private ScheduledFuture<?> timer;
    private boolean ended;

    private ServerCallContext(Long deadlineNanoTime, TraceContext trace, Peer peer, BooleanSupplier cancelledBy) {
        this.hasDeadline = deadlineNanoTime != null;
        this.deadlineNanos = hasDeadline ? deadlineNanoTime : 0;
        this.trace = trace;
        this.peer = peer == null ? Peer.UNKNOWN : peer;
        this.cancelledBy = cancelledBy;
    }

    /**
     * For protocol servers: a call that must end by {@code deadlineNanoTime} ({@link System#nanoTime()}
     * terms; null: no deadline) and arrived with {@code trace} (null: none), from an unknown peer.
     */
    public static ServerCallContext create(Long deadlineNanoTime, TraceContext trace) {
        return new ServerCallContext(deadlineNanoTime, trace, null, null);
    }

    /**
     * For protocol servers: as {@link #create(Long, TraceContext)}, made by {@code peer} (null:
     * {@link Peer#UNKNOWN}).
     */
    public static ServerCallContext create(Long deadlineNanoTime, TraceContext trace, Peer peer) {
        return new ServerCallContext(deadlineNanoTime, trace, peer, null);
    }

    /** Who made this call, as its protocol established it; {@link Peer#UNKNOWN} when it could not tell. */
    public Peer callPeer() {
        return peer;
    }

    /**
     * For protocol servers, before the call runs: the server's TLS settings and the session of the
     * connection the call came on, by which {@link #callerStillTrusted()} tells whether the
     * caller's client chain is still trusted while the call runs; either null (plain text) leaves
     * nothing to check. Returns this.
     */
    public ServerCallContext trustedBy(TlsSettings tls, javax.net.ssl.SSLSession session) {
        if (tls != null && session != null) {   // a call in plain text writes nothing
            this.tls = tls;
            this.session = session;
        }
        return this;
    }

    /**
     * Whether the caller of the call the current thread runs is still trusted by the server's
     * trust store and revocation lists in force, as a new call on its connection would be checked.
     * For an operation that waits long before it answers (a long poll): a caller revoked meanwhile
     * need not be told what it found. True outside a call and where the protocol has nothing to
     * check.
     *
     * <pre>{@code
     * Changes found = waitForChanges(names, Duration.ofSeconds(25));
     * if (!ServerCallContext.callerStillTrusted()) {
     *     throw PermissionDeniedException.unauthenticated(null, "no longer trusted");
     * }
     * return found;
     * }</pre>
     */
    public static boolean callerStillTrusted() {
        ServerCallContext c = CURRENT.get();
        return c == null || c.tls == null || c.tls.stillTrusts(c.session);
    }

    /** The deadline {@code timeout} from now, in {@link System#nanoTime()} terms; null for a null timeout. */
    public static Long deadlineAfter(Duration timeout) {
        return timeout == null ? null : System.nanoTime() + timeout.toNanos();
    }

    /**
     * Cancels this call when its deadline passes (for servers whose protocol does not do it for them);
     * at once if it has passed already. Returns this.
     */
    public ServerCallContext cancelAtDeadline() {
        if (!hasDeadline) {
            return this;
        }
        long left = deadlineNanos - System.nanoTime();
        if (left <= 0) {
            cancel();
            return this;
        }
        synchronized (this) {
            if (!ended && !cancelled) {
                timer = TIMER.schedule(this::cancel, left, TimeUnit.NANOSECONDS);
            }
        }
        return this;
    }

    /**
     * Makes this the current thread's call until the returned scope closes, which restores what
     * was there before (calls nest: an in-process call runs on its caller's thread). While in
     * scope, {@link #cancel} interrupts the thread; closing the scope ends the call (its timer and
     * listeners are dropped) and clears an interrupt that its own cancel left.
     */
    public Scope enter() {
        return enter(true);
    }

    /**
     * As {@link #enter()}; {@code interruptible} false for a thread that must never be interrupted
     * (an event loop running a short operation itself): a cancel then only flags the call and runs
     * its listeners.
     */
    public Scope enter(boolean interruptible) {
        ServerCallContext before = CURRENT.get();
        Thread self = interruptible ? Thread.currentThread() : null;
        synchronized (this) {
            thread = self;
        }
        CURRENT.set(this);
        return () -> {
            boolean clear;
            synchronized (this) {
                thread = null;
                ended = true;
                listeners = null;
                if (timer != null) {
                    timer.cancel(false);
                    timer = null;
                }
                clear = cancelled;
            }
            if (clear && self != null && (before == null || !before.cancelledNow())) {
                Thread.interrupted();   // this call's own cancel must not leak into the thread's next work
            }
            CURRENT.set(before);   // null kept as a value: a remove would make the next call add an entry again
        };
    }

    /**
     * Makes this call the current thread's for work its operation handed to this thread, until
     * the returned scope closes: {@link #current()} is this call, so the meta-stub calls the thread
     * makes get what is left of its deadline and are cancelled with it, and a cancel interrupts the
     * thread. Unlike {@link #enter()}, closing the scope does not end the call (its operation's
     * thread does), and it clears an interrupt only if this call's cancel made it, so a pool's
     * thread goes back to its pool as it came. {@link #wrap(Runnable)} and
     * {@link #propagating(Executor)} do this around a task.
     */
    public Scope join() {
        ServerCallContext before = CURRENT.get();
        Joined joined = new Joined(Thread.currentThread());
        CURRENT.set(this);
        Scope registration = addCancelListener(joined::interrupt);
        return () -> {
            registration.close();
            if (joined.leave() && (before == null || !before.cancelledNow())) {
                Thread.interrupted();   // this call's cancel must not reach the thread's next task
            }
            CURRENT.set(before);
        };
    }

    /** A thread in a call through {@link #join()}: interrupted by the call's cancel until it leaves. */
    private static final class Joined {
        private final Thread thread;
        private boolean left;
        private boolean interrupted;

        Joined(Thread thread) {
            this.thread = thread;
        }

        synchronized void interrupt() {
            if (!left) {
                interrupted = true;
                thread.interrupt();
            }
        }

        /** No interrupt after this; whether one was made. */
        synchronized boolean leave() {
            left = true;
            return interrupted;
        }
    }

    /**
     * {@code task}, run in this call on whichever thread runs it ({@link #join()}): its meta-stub
     * calls inherit the deadline and the cancel. What each {@link TaskContextCarrier} carries (the
     * current trace span) is taken here, on the thread that wraps the task.
     *
     * <pre>{@code
     * ServerCallContext call = ServerCallContext.current();
     * new Thread(call.wrap(() -> simulator.simulate(parameters))).start();
     * }</pre>
     */
    public Runnable wrap(Runnable task) {
        Runnable carried = TaskContextCarriers.carry(Objects.requireNonNull(task, "task"));
        return () -> {
            try (Scope scope = join()) {
                carried.run();
            }
        };
    }

    /** As {@link #wrap(Runnable)}, for a task with a result. */
    public <T> Callable<T> wrap(Callable<T> task) {
        Callable<T> carried = TaskContextCarriers.carry(Objects.requireNonNull(task, "task"));
        return () -> {
            try (Scope scope = join()) {
                return carried.call();
            }
        };
    }

    /**
     * An executor that runs each task on {@code executor} in the call that was current on the thread
     * that handed it over ({@link #wrap(Runnable)}); a task handed over outside of a call runs as it
     * is. So an operation that fans its calls out over a pool keeps its caller's deadline and cancel
     * on each of them:
     *
     * <pre>{@code
     * Executor inCall = ServerCallContext.propagating(pool);
     * List<CompletableFuture<Result>> parts = slices.stream()
     *         .map(s -> CompletableFuture.supplyAsync(() -> simulator.simulate(s), inCall)).toList();
     * }</pre>
     *
     * The state of each {@link TaskContextCarrier} goes along too: with the meta-stub's module on
     * the class path, OpenTelemetry's current span, so the calls made on the pool are traced as
     * children of the span current where they were handed over.
     */
    public static Executor propagating(Executor executor) {
        Objects.requireNonNull(executor, "executor");
        return task -> {
            ServerCallContext call = CURRENT.get();
            executor.execute(call == null ? task : call.wrap(task));
        };
    }

    /**
     * Cancels the call: {@link #isCancelled()} turns true, the thread in its scope is interrupted,
     * and the listeners ({@link #onCancel}; the calls the operation has under way) are run, once.
     * Safe from any thread, any number of times.
     */
    public void cancel() {
        List<Runnable> toRun;
        synchronized (this) {
            if (cancelled) {
                return;
            }
            cancelled = true;
            if (thread != null) {
                thread.interrupt();
            }
            if (timer != null) {
                timer.cancel(false);
                timer = null;
            }
            toRun = listeners;
            listeners = null;
        }
        if (toRun != null) {
            for (Runnable r : toRun) {
                try {
                    r.run();
                } catch (RuntimeException e) {
                    // a listener's failure must not keep the others from running
                }
            }
        }
    }

    /** Whether this call was cancelled or its deadline has passed. */
    public boolean cancelledNow() {
        return cancelled || (cancelledBy != null && cancelledBy.getAsBoolean())
                || (hasDeadline && deadlineNanos - System.nanoTime() <= 0);
    }

    /** Whether the deadline passed before the call could start; false without a deadline. */
    public boolean expired() {
        return hasDeadline && deadlineNanos - System.nanoTime() <= 0;
    }

    /** This call's deadline in {@link System#nanoTime()} terms; null when it has none. */
    public Long deadlineNanos() {
        return hasDeadline ? deadlineNanos : null;
    }

    /**
     * Runs {@code listener} when this call is cancelled (at once, on this thread, if it is already);
     * closing the returned registration drops it. Listeners run on the thread that cancels (a
     * protocol's event loop, the deadline timer): they must be short and must not block.
     */
    public Scope addCancelListener(Runnable listener) {
        synchronized (this) {
            if (!cancelled && !ended && !expired()) {
                if (listeners == null) {
                    listeners = new ArrayList<>(2);
                }
                listeners.add(listener);
                return () -> {
                    synchronized (this) {
                        if (listeners != null) {
                            listeners.remove(listener);
                        }
                    }
                };
            }
        }
        if (cancelledNow()) {
            listener.run();
        }
        return () -> { };
    }

    /** The call the current thread runs; null outside of one. */
    public static ServerCallContext current() {
        return CURRENT.get();
    }

    /** Whether the call the current thread runs has been cancelled by its caller, or its deadline passed. */
    public static boolean isCancelled() {
        ServerCallContext c = CURRENT.get();
        return Thread.currentThread().isInterrupted() || (c != null && c.cancelledNow());
    }

    /** When the call the current thread runs must end, as its caller set it; null when it has no deadline (or outside a call). */
    public static Instant deadline() {
        Duration left = timeLeft();
        return left == null ? null : Instant.now().plus(left);
    }

    /** The time left until the current call's deadline (zero once it has passed); null when it has none (or outside a call). */
    public static Duration timeLeft() {
        ServerCallContext c = CURRENT.get();
        if (c == null || !c.hasDeadline) {
            return null;
        }
        return Duration.ofNanos(Math.max(0, c.deadlineNanos - System.nanoTime()));
    }

    /**
     * Runs {@code listener} when the current thread's call is cancelled or its deadline passes; a
     * registration that does nothing outside of a call. See {@link #addCancelListener}.
     */
    public static Scope onCancel(Runnable listener) {
        ServerCallContext c = CURRENT.get();
        return c == null ? () -> { } : c.addCancelListener(listener);
    }

    /**
     * For protocol servers that keep their own cancellation flag: the current thread runs a call
     * whose cancellation {@code cancelled} reports, without a deadline, until the returned scope
     * closes. {@link #create} and {@link #enter()} give the call a deadline and listeners too.
     */
    public static Scope enter(BooleanSupplier cancelled) {
        return enter(cancelled, null);
    }

    /**
     * The trace context the call the current thread runs arrived with (checked by
     * {@link TraceContext#of}); null when it came without one, or outside of a call.
     */
    public static TraceContext trace() {
        ServerCallContext c = CURRENT.get();
        return c == null ? null : c.trace;
    }

    /**
     * Who made the call the current thread runs (the same on every protocol); {@link Peer#UNKNOWN}
     * outside of a call, or where the protocol could not tell.
     */
    public static Peer peer() {
        ServerCallContext c = CURRENT.get();
        return c == null ? Peer.UNKNOWN : c.peer;
    }

    /**
     * As {@link #enter(BooleanSupplier)}, and the call arrived with {@code trace} (null: none).
     * {@code cancelled} may be null when the protocol cannot tell.
     */
    public static Scope enter(BooleanSupplier cancelled, TraceContext trace) {
        return new ServerCallContext(null, trace, null, cancelled).enter();
    }

    /** Ends a call's context (or a listener's registration) on the thread that entered it. */
    public interface Scope extends AutoCloseable {
        @Override
        void close();
    }
}
