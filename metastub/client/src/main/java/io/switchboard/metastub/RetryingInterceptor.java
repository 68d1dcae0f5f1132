package io.switchboard.metastub;

import io.switchboard.protocol.AsyncCalls;
import java.util.concurrent.CancellationException;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;

/**
 * The repeat loop, written once for every step that may send a call again: the failsafe's
 * fallback to SOAP ({@link FailsafeInterceptor}) and the move to another replica
 * ({@code io.switchboard.client.ReplicaFailoverInterceptor}), as Dubbo's failover and failfast
 * invokers share one base. A subclass says what an attempt is, what to note when one ends, and
 * whether (and where) to go again; this class runs the loop, the same for blocking and
 * asynchronous calls, and never repeats a call whose caller cancelled it.
 *
 * <p>A blocking call's attempts are complete futures: the loop runs on the caller's thread and
 * allocates nothing of its own. An asynchronous attempt still under way is waited for with one
 * stage.
 *
 * <pre>{@code
 * final class TwiceInterceptor extends RetryingInterceptor {
 *     protected void ended(ClientCall call, Throwable failure) { }
 *     protected Throwable retry(ClientCall call, Throwable failure) {
 *         if (call.attempt() > 0 || !(failure instanceof TransportException)) return failure;
 *         call.repeat(null, "second try", false);
 *         return null;
 *     }
 * }
 * }</pre>
 */
public abstract class RetryingInterceptor implements ClientInterceptor {
    @Override
    public final CompletableFuture<Object> intercept(ClientCall call, Chain next) {
        return loop(call, next, attemptSafely(call, next));
    }

    /** One attempt; by default the rest of the chain. A subclass may pick a target first (and throw if there is none). */
    protected CompletableFuture<Object> attempt(ClientCall call, Chain next) {
        return next.proceed(call);
    }

    /** After every attempt, before anything else: bookkeeping (health, back-off, calls in flight). {@code failure} null on success. */
    protected abstract void ended(ClientCall call, Throwable failure);

    /**
     * After a failed attempt of a call not cancelled: either sets {@code call} up for another
     * attempt ({@link ClientCall#repeat}) and returns null, or returns what the call fails with
     * ({@code failure} itself or an exception that says more).
     */
    protected abstract Throwable retry(ClientCall call, Throwable failure);

    private CompletableFuture<Object> loop(ClientCall call, Chain next, CompletableFuture<Object> sent) {
        while (sent.isDone()) {
            Throwable failure = failureOf(sent);
            ended(call, failure);
            if (failure == null) {
                return sent;
            }
            Throwable end = call.cancelled() ? failure : retry(call, failure);
            if (end != null) {
                return end == failure ? sent : CompletableFuture.failedFuture(end);
            }
            sent = attemptSafely(call, next);
        }
        CompletableFuture<Object> pending = sent;
        return pending.handle((response, failure) -> pending).thenCompose(done -> loop(call, next, done));
    }

    private CompletableFuture<Object> attemptSafely(ClientCall call, Chain next) {
        try {
            return attempt(call, next);
        } catch (RuntimeException e) {
            return CompletableFuture.failedFuture(e);
        }
    }

    /** The failure of a completed future, unwrapped; null if it succeeded. */
    static Throwable failureOf(CompletableFuture<Object> done) {
        if (!done.isCompletedExceptionally()) {
            return null;
        }
        try {
            done.join();
            return null;
        } catch (CompletionException e) {
            return AsyncCalls.unwrap(e);
        } catch (CancellationException e) {
            return e;
        }
    }
}
