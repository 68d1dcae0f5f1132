package io.switchboard.protocol;

import java.util.function.BooleanSupplier;

/**
 * What a component's operation can ask about the call it runs in: whether the caller has
 * cancelled it, so that long work can stop early. Protocol servers set it around each
 * operation; outside of one, and on protocols that cannot tell, {@link #isCancelled()} says
 * whether the running thread was interrupted (how gRPC and the local protocol also signal a
 * cancelled call).
 *
 * <p>What a server notices, per protocol: gRPC — the client cancelled the call, its deadline
 * passed or its connection dropped (the operation's thread is interrupted too); local — the
 * caller's future was cancelled (the thread running the call is interrupted); SOAP — nothing:
 * the client closes its HTTP connection, but the operation runs to its end (its answer goes
 * nowhere).
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
 * <p>It also holds the W3C trace context the call arrived with ({@link #trace()}), which the
 * server's tracing reads to make the operation's span a child of the caller's.
 */
public final class ServerCallContext {
    private static final ThreadLocal<BooleanSupplier> CURRENT = new ThreadLocal<>();
    private static final ThreadLocal<TraceContext> TRACE = new ThreadLocal<>();

    private ServerCallContext() {
    }

    /** Whether the call the current thread runs has been cancelled by its caller. */
    public static boolean isCancelled() {
        BooleanSupplier cancelled = CURRENT.get();
        return Thread.currentThread().isInterrupted() || (cancelled != null && cancelled.getAsBoolean());
    }

    /**
     * For protocol servers: the current thread runs a call whose cancellation {@code cancelled}
     * reports, until the returned scope closes (which restores what was there before).
     *
     * <pre>{@code
     * try (ServerCallContext.Scope scope = ServerCallContext.enter(() -> cancelled)) {
     *     response = skeleton.invoke(op, request, callId);
     * }
     * }</pre>
     */
    public static Scope enter(BooleanSupplier cancelled) {
        return enter(cancelled, null);
    }

    /**
     * The trace context the call the current thread runs arrived with (checked by
     * {@link TraceContext#of}); null when it came without one, or outside of a call.
     */
    public static TraceContext trace() {
        return TRACE.get();
    }

    /**
     * For protocol servers: as {@link #enter(BooleanSupplier)}, and the call arrived with
     * {@code trace} (null: none). {@code cancelled} may be null when the protocol cannot tell.
     */
    public static Scope enter(BooleanSupplier cancelled, TraceContext trace) {
        BooleanSupplier before = CURRENT.get();
        TraceContext traceBefore = TRACE.get();
        CURRENT.set(cancelled);
        TRACE.set(trace);
        return () -> {
            if (before == null) {
                CURRENT.remove();
            } else {
                CURRENT.set(before);
            }
            if (traceBefore == null) {
                TRACE.remove();
            } else {
                TRACE.set(traceBefore);
            }
        };
    }

    /** Ends a call's context on the thread that entered it. */
    public interface Scope extends AutoCloseable {
        @Override
        void close();
    }
}
