package io.switchboard.metastub;

import io.switchboard.protocol.CallOptions;
import io.switchboard.protocol.DeadlineExceededException;
import io.switchboard.protocol.SwitchboardException;
import io.switchboard.protocol.TransportException;
import io.switchboard.protocol.TransportException.Delivery;
import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import java.util.function.LongSupplier;

/**
 * The whole call's deadline ({@link CallOptions#withDeadlineAfter}), one step in two places of a
 * chain. {@link #call} sits outside the steps that repeat a call (the failsafe, replica failover):
 * it turns the caller's duration into an absolute instant when the call starts, kept in the
 * options so that nested channels (a replicated channel's meta-stubs) count down to the same one.
 * {@link #attempt} sits after them and runs once per attempt: it gives the attempt the smaller of
 * the time left and its own timeout ({@link CallOptions#timeout}, else the client's default), and
 * once the deadline has passed it starts nothing (no fallback, retry or failover) and fails the
 * call with a {@link DeadlineExceededException} that says whether an earlier attempt may have
 * run the operation. A call without a deadline goes through both untouched.
 *
 * <pre>{@code
 * List<ClientInterceptor> steps = List.of(DeadlineInterceptor.call(System::nanoTime), failsafe,
 *         DeadlineInterceptor.attempt(System::nanoTime, Duration.ofSeconds(120)), connect);
 * }</pre>
 */
public final class DeadlineInterceptor implements ClientInterceptor {
    /**
     * A failure this close to the deadline failed for it. Servers learn the time left in whole
     * milliseconds, rounded down (tcp's {@code timeout_ms}, SOAP's {@code timeout-ms}), so a
     * server's deadline can pass up to a millisecond before the caller's, and its "timed out"
     * answer arrive while the caller's own deadline is still a fraction of a millisecond away.
     */
    static final long SERVER_ROUNDING_NANOS = 2_000_000;
    private final LongSupplier nanoClock;
    private final boolean perAttempt;
    private final Duration defaultTimeout;

    private DeadlineInterceptor(LongSupplier nanoClock, boolean perAttempt, Duration defaultTimeout) {
        this.nanoClock = nanoClock;
        this.perAttempt = perAttempt;
        this.defaultTimeout = defaultTimeout;
    }

    /** The outer step: fixes the deadline when the call starts (one already fixed, by an enclosing channel, stays). */
    public static DeadlineInterceptor call(LongSupplier nanoClock) {
        return new DeadlineInterceptor(nanoClock, false, null);
    }

    /**
     * The step before each attempt: refuses it once the deadline has passed, else bounds its
     * timeout by the time left.
     *
     * @param defaultTimeout the attempt's timeout when the call sets none (the client's
     *                       {@code callTimeout}); null: unknown, then only the refusal applies and
     *                       the channel below bounds its own attempts
     */
    public static DeadlineInterceptor attempt(LongSupplier nanoClock, Duration defaultTimeout) {
        return new DeadlineInterceptor(nanoClock, true, defaultTimeout);
    }

    @Override
    public CompletableFuture<Object> intercept(ClientCall call, Chain next) {
        CallOptions options = call.options();
        if (!perAttempt) {
            // a call made by an operation, on its thread, gets no more than the time its own caller left it
            Long inherited = inheritedDeadline();
            if (inherited != null && (options.deadlineNanoTime() == null || inherited - options.deadlineNanoTime() < 0)
                    && (options.deadlineAfter() == null
                        || inherited - (nanoClock.getAsLong() + options.deadlineAfter().toNanos()) < 0)) {
                call.options(options.withDeadlineNanoTime(inherited));
            } else if (options.deadlineNanoTime() == null && options.deadlineAfter() != null) {
                call.options(options.withDeadlineNanoTime(nanoClock.getAsLong() + options.deadlineAfter().toNanos()));
            }
            Long deadline = call.options().deadlineNanoTime();
            return deadline == null ? next.proceed(call) : whenLate(call, deadline, next.proceed(call));
        }
        if (options.deadlineAfter() == null && options.deadlineNanoTime() == null) {
            return next.proceed(call);   // the common case: no deadline, nothing done
        }
        if (options.deadlineNanoTime() == null) {
            throw new IllegalStateException("a deadline not fixed at the start of the call: DeadlineInterceptor.call "
                    + "belongs before DeadlineInterceptor.attempt");
        }
        long left = options.deadlineNanoTime() - nanoClock.getAsLong();
        if (call.attemptTimeout == null) {   // the first attempt: what every attempt may take at most
            call.attemptTimeout = options.timeout() != null ? options.timeout() : defaultTimeout;
        }
        if (left <= 0) {
            return CompletableFuture.failedFuture(expired(call));
        }
        Duration limit = call.attemptTimeout;
        if (limit != null) {
            call.options(options.withTimeout(left < limit.toNanos() ? Duration.ofNanos(left) : limit));
        }
        return next.proceed(call);
    }

    /**
     * A call that failed once its deadline had passed failed for it: the last attempt ended because
     * the time ran out (here, or on a server it reached, which was given the same deadline and
     * cancelled the operation when it passed), and the caller hears it as such.
     */
    private CompletableFuture<Object> whenLate(ClientCall call, long deadline, CompletableFuture<Object> outcome) {
        return outcome.handle((response, failure) -> {
            if (failure == null) {
                return response;
            }
            Throwable cause = io.switchboard.protocol.AsyncCalls.unwrap(failure);
            if (cause instanceof SwitchboardException e && !(cause instanceof DeadlineExceededException)
                    && deadline - nanoClock.getAsLong() <= SERVER_ROUNDING_NANOS) {
                Delivery delivery = e instanceof TransportException t ? t.delivery()
                        : e instanceof io.switchboard.protocol.RefusedException ? Delivery.NOT_DELIVERED
                        : Delivery.MAY_HAVE_RUN;
                if (mayHaveRun(call.earlierFailure)) {
                    delivery = Delivery.MAY_HAVE_RUN;
                }
                Duration after = call.options().deadlineAfter();
                throw new DeadlineExceededException(call.protocol() != null ? call.protocol() : call.component(),
                        delivery, "the deadline" + (after == null ? " its caller left it" : " of " + after.toMillis()
                        + " ms") + " passed during " + call.operation().name() + " (" + e.getClass().getSimpleName()
                        + (call.protocol() == null ? "" : " over " + call.protocol()) + ")", e);
            }
            throw cause instanceof java.util.concurrent.CompletionException c ? c
                    : new java.util.concurrent.CompletionException(cause);
        });
    }

    /** The deadline of the server call the current thread runs (an operation calling on), or null. */
    private static Long inheritedDeadline() {
        io.switchboard.protocol.ServerCallContext context = io.switchboard.protocol.ServerCallContext.current();
        return context == null ? null : context.deadlineNanos();
    }

    /** The refusal of {@code call}'s next attempt: what it would have been, and whether an earlier one may have run. */
    private static DeadlineExceededException expired(ClientCall call) {
        Duration after = call.options().deadlineAfter();
        String which = call.attempt() == 0 ? "the call"
                : call.fallback() ? "the fallback over " + call.protocol()
                : "attempt " + (call.attempt() + 1) + " (" + call.reason() + ")";
        Throwable earlier = call.earlierFailure;
        return new DeadlineExceededException(call.protocol() != null ? call.protocol() : call.component(),
                mayHaveRun(earlier) ? Delivery.MAY_HAVE_RUN : Delivery.NOT_DELIVERED,
                "the deadline" + (after == null ? "" : " of " + after.toMillis() + " ms") + " passed before " + which
                        + " of " + call.operation().name() + " could start"
                        + (earlier == null ? "" : "; the attempt before failed: " + earlier.getMessage()), earlier);
    }

    /**
     * What a repeating step ends with when an attempt was refused for the deadline: the refusal,
     * made to say the operation may have run when an earlier attempt of this step may have run it
     * (a nested channel's refusal knows only of its own attempts).
     */
    static Throwable refused(ClientCall call, DeadlineExceededException refusal) {
        if (refusal.delivery() == Delivery.MAY_HAVE_RUN || !mayHaveRun(call.earlierFailure)) {
            return refusal;
        }
        return new DeadlineExceededException(refusal.protocol(), Delivery.MAY_HAVE_RUN, "the deadline passed before "
                + "another attempt of " + call.operation().name() + " could start, after one that failed when the "
                + "request may have reached the operation (" + call.earlierFailure.getMessage() + ")", refusal);
    }

    static boolean mayHaveRun(Throwable failure) {
        return failure instanceof TransportException t && t.delivery() == Delivery.MAY_HAVE_RUN;
    }

    @Override
    public String toString() {
        return perAttempt ? "DeadlineInterceptor.attempt" : "DeadlineInterceptor.call";
    }
}
