package io.switchboard.protocol;

import io.switchboard.idl.runtime.DeclaredFault;
import io.switchboard.idl.runtime.OperationDescriptor;
import java.util.concurrent.CancellationException;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.Executor;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.ThreadPoolExecutor;
import java.util.concurrent.TimeUnit;
import java.util.function.Function;

/**
 * Helpers for the asynchronous form of calls ({@link Channel#callAsync}): the pool that runs
 * blocking calls for channels without an asynchronous path of their own, cancellation that
 * reaches the call in progress, and the conversion between a future's failure and the exception
 * the blocking form throws. Generated stubs use {@link #map}.
 *
 * <pre>{@code
 * CompletableFuture<Object> f = AsyncCalls.onPool(transport, operation, request, options);
 * f.cancel(true);   // interrupts the thread running the blocking call, if it has started
 * }</pre>
 */
public final class AsyncCalls {
    /**
     * Threads that run blocking calls for {@link Channel#callAsync}'s default: calls beyond this
     * many wait in a queue rather than each holding a thread of its own.
     */
    public static final int POOL_THREADS = 64;

    private static final Executor POOL;

    static {
        ThreadPoolExecutor pool = new ThreadPoolExecutor(POOL_THREADS, POOL_THREADS, 30, TimeUnit.SECONDS,
                new LinkedBlockingQueue<>(), DaemonThreads.numbered("switchboard-async"));
        pool.allowCoreThreadTimeOut(true);
        POOL = pool;
    }

    private AsyncCalls() {
    }

    /**
     * Runs {@code channel.call(...)} on the shared pool. Cancelling the future before the call
     * starts skips it; cancelling it while it runs interrupts the thread that runs it (what the
     * call does about that is up to the channel).
     */
    public static CompletableFuture<Object> onPool(Channel channel, OperationDescriptor operation, Object request,
                                                   CallOptions options) {
        return on(POOL, channel, operation, request, options);
    }

    /**
     * {@link #onPool} on {@code executor} (the one {@link ClientSettings#executor()} gives), or on
     * the shared pool when it is null. An executor that refuses the call fails the future.
     */
    public static CompletableFuture<Object> on(Executor executor, Channel channel, OperationDescriptor operation,
                                               Object request, CallOptions options) {
        PooledCall call = new PooledCall(channel, operation, request, options);
        try {
            (executor == null ? POOL : executor).execute(call);
        } catch (java.util.concurrent.RejectedExecutionException e) {
            call.completeExceptionally(e);
        }
        return call;
    }

    /** The blocking call's outcome as an already completed future: the blocking form of a shared async path. */
    public static CompletableFuture<Object> now(Channel channel, OperationDescriptor operation, Object request,
                                                CallOptions options) {
        try {
            return CompletableFuture.completedFuture(channel.call(operation, request, options));
        } catch (DeclaredFault | RuntimeException e) {
            return CompletableFuture.failedFuture(e);
        }
    }

    /**
     * Waits for {@code future} and returns its value, or throws what the blocking form of the call
     * would have thrown: the declared fault or unchecked exception itself, not a wrapper.
     */
    public static Object await(CompletableFuture<Object> future) throws DeclaredFault {
        try {
            return future.join();
        } catch (CancellationException e) {
            throw e;
        } catch (CompletionException e) {
            Throwable cause = unwrap(e);
            if (cause instanceof DeclaredFault f) {
                throw f;
            }
            if (cause instanceof RuntimeException r) {
                throw r;
            }
            if (cause instanceof Error err) {
                throw err;
            }
            throw new SwitchboardException(String.valueOf(cause.getMessage()), cause);
        }
    }

    /** The exception a future failed with, without the {@link CompletionException} layers stages add. */
    public static Throwable unwrap(Throwable failure) {
        Throwable t = failure;
        while ((t instanceof CompletionException || t instanceof ExecutionException) && t.getCause() != null) {
            t = t.getCause();
        }
        return t;
    }

    /**
     * For channels whose blocking and non-blocking forms share one path: {@code path} gets the
     * future the caller will hold (to watch for its cancellation) and returns the call's outcome;
     * the caller's future completes with that outcome, unwrapped. A path that throws fails it.
     */
    public static CompletableFuture<Object> start(Function<CompletableFuture<Object>, CompletableFuture<Object>> path) {
        CompletableFuture<Object> caller = new CompletableFuture<>();
        CompletableFuture<Object> outcome;
        try {
            outcome = path.apply(caller);
        } catch (RuntimeException e) {
            outcome = CompletableFuture.failedFuture(e);
        }
        outcome.whenComplete((response, failure) -> {
            if (failure == null) {
                caller.complete(response);
            } else {
                caller.completeExceptionally(unwrap(failure));
            }
        });
        return caller;
    }

    /** Cancels {@code inner} when {@code outer} is cancelled (at once if it already is). */
    public static void cancelWith(CompletableFuture<?> outer, CompletableFuture<?> inner) {
        outer.whenComplete((r, t) -> {
            if (outer.isCancelled()) {
                inner.cancel(true);
            }
        });
    }

    /**
     * What generated stubs return: {@code response} mapped by {@code unwrapResponse}; a declared
     * fault of another operation becomes a {@link RemoteInvocationException}, as in the blocking form;
     * cancelling the returned future cancels the call.
     */
    public static <R> CompletableFuture<R> map(CompletableFuture<Object> response, OperationDescriptor operation,
                                               Function<Object, R> unwrapResponse) {
        CompletableFuture<R> mapped = response.handle((value, failure) -> {
            if (failure == null) {
                return unwrapResponse.apply(value);
            }
            Throwable cause = unwrap(failure);
            if (cause instanceof DeclaredFault f && (operation.faultInfoClass() == null
                    || !operation.faultInfoClass().isInstance(f.faultInfo()))) {
                throw new RemoteInvocationException(operation.name() + " raised a fault it does not declare: "
                        + f.getMessage(), f.getClass().getName(), f);
            }
            throw cause instanceof CompletionException c ? c : new CompletionException(cause);
        });
        cancelWith(mapped, response);
        return mapped;
    }

    /** A blocking call on the pool; {@link #cancel} interrupts it while it runs. */
    private static final class PooledCall extends CompletableFuture<Object> implements Runnable {
        private final Channel channel;
        private final OperationDescriptor operation;
        private final Object request;
        private final CallOptions options;
        private Thread runner;

        PooledCall(Channel channel, OperationDescriptor operation, Object request, CallOptions options) {
            this.channel = channel;
            this.operation = operation;
            this.request = request;
            this.options = options;
        }

        @Override
        public void run() {
            synchronized (this) {
                if (isDone()) {
                    return;   // cancelled while queued
                }
                runner = Thread.currentThread();
            }
            try {
                complete(channel.call(operation, request, options));
            } catch (DeclaredFault | RuntimeException | Error e) {
                completeExceptionally(e);
            } finally {
                synchronized (this) {
                    runner = null;
                }
                Thread.interrupted();   // a late cancel must not leak into the pool thread's next call
            }
        }

        @Override
        public boolean cancel(boolean mayInterruptIfRunning) {
            boolean cancelled = super.cancel(mayInterruptIfRunning);
            if (cancelled) {
                synchronized (this) {
                    if (runner != null) {
                        runner.interrupt();
                    }
                }
            }
            return cancelled;
        }
    }
}
