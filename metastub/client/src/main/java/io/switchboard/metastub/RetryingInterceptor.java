package io.switchboard.metastub;

import io.switchboard.protocol.AsyncCalls;
import io.switchboard.protocol.DeadlineExceededException;
import java.util.concurrent.CancellationException;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.function.BiConsumer;

/**
 * The repeat loop, written once for every step that may send a call again: the failsafe's
 * fallback to SOAP ({@link FailsafeInterceptor}) and the move to another replica
 * ({@code io.switchboard.client.ReplicaFailoverInterceptor}), as Dubbo's failover and failfast
 * invokers share one base. A subclass says what an attempt is, what to note when one ends, and
 * whether (and where) to go again; this class runs the loop, the same for blocking and
 * asynchronous calls, and never repeats a call whose caller cancelled it or an attempt refused
 * because the call's deadline passed ({@link DeadlineInterceptor}).
 *
 * <p>A blocking call's attempts are complete futures: the loop runs on the caller's thread and
 * allocates nothing of its own. An asynchronous attempt still under way is waited for by one
 * object per call, the future the caller gets, which resumes the loop when the attempt ends.
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
        return loop(call, next, attemptSafely(call, next), null);
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

    /**
     * Handles attempts that are complete, in place; at the first one still under way, hands the
     * rest of the loop to {@code resume} (made then, once per call) and returns it.
     */
    private CompletableFuture<Object> loop(ClientCall call, Chain next, CompletableFuture<Object> sent, Resume resume) {
        while (sent.isDone()) {
            Throwable failure = failureOf(sent);
            ended(call, failure);
            Throwable end = failure == null ? null
                    : call.cancelled() ? failure
                    : failure instanceof DeadlineExceededException refusal ? DeadlineInterceptor.refused(call, refusal)
                    : retry(call, failure);
            if (failure == null || end != null) {
                if (resume != null) {
                    resume.settle(sent, end);
                    return resume;
                }
                return end == failure ? sent : CompletableFuture.failedFuture(end);
            }
            call.attemptFailed(failure);
            sent = attemptSafely(call, next);
        }
        Resume r = resume != null ? resume : new Resume(call, next);
        r.pending = sent;
        sent.whenComplete(r);
        return r;
    }

    /** An attempt that throws, an Error included, ends as a failed one: {@link #ended} always runs. */
    private CompletableFuture<Object> attemptSafely(ClientCall call, Chain next) {
        try {
            return attempt(call, next);
        } catch (RuntimeException | Error e) {
            return CompletableFuture.failedFuture(e);
        }
    }

    /** The outcome of a call whose attempts did not all complete at once; resumes the loop when one ends. */
    private final class Resume extends CompletableFuture<Object> implements BiConsumer<Object, Throwable> {
        private final ClientCall call;
        private final Chain next;
        private CompletableFuture<Object> pending;

        Resume(ClientCall call, Chain next) {
            this.call = call;
            this.next = next;
        }

        @Override
        public void accept(Object response, Throwable failure) {
            loop(call, next, pending, this);
        }

        /** Completes with the last attempt's response ({@code failure} null) or with {@code failure}. */
        void settle(CompletableFuture<Object> last, Throwable failure) {
            if (failure == null) {
                complete(last.join());
            } else {
                completeExceptionally(failure);
            }
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
