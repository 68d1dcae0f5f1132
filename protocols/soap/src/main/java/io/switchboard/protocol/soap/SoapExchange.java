package io.switchboard.protocol.soap;

import io.switchboard.protocol.DaemonThreads;
import java.io.InterruptedIOException;
import org.apache.hc.client5.http.classic.ExecChainHandler;
import org.apache.hc.client5.http.classic.ExecRuntime;

/**
 * The HTTP exchange of one asynchronous SOAP call, so that cancelling the call can abort it: the
 * calling thread names it in {@link #CURRENT}, the HTTP client's interceptor ({@link #TRACKER})
 * hands it the exchange's connection, and {@link #abort} closes that connection, which ends the
 * blocked read or write at once. The server is not told (SOAP has no cancel) and runs on.
 */
final class SoapExchange {
    static final ThreadLocal<SoapExchange> CURRENT = new ThreadLocal<>();
    /** Cuts exchanges whose call's deadline passed: a socket's read timeout starts only once the request is out. */
    private static final java.util.concurrent.ScheduledThreadPoolExecutor DEADLINES;

    static {
        DEADLINES = new java.util.concurrent.ScheduledThreadPoolExecutor(1, DaemonThreads.named("soap-deadlines"));
        DEADLINES.setRemoveOnCancelPolicy(true);
    }

    /** First in the HTTP client's chain: ties the exchange's runtime to the current call, if any. */
    static final ExecChainHandler TRACKER = (request, scope, chain) -> {
        SoapExchange exchange = CURRENT.get();
        if (exchange != null && !exchange.attach(scope.execRuntime)) {
            throw new InterruptedIOException("the call was cancelled before it was sent");
        }
        return chain.proceed(request, scope);
    };

    private ExecRuntime runtime;
    private boolean aborted;

    /** False when the call was cancelled already: the request must not go out. */
    private synchronized boolean attach(ExecRuntime exchangeRuntime) {
        runtime = exchangeRuntime;
        return !aborted;
    }

    /** Aborts this exchange at {@code deadlineNanoTime} ({@link System#nanoTime()} terms) unless the returned task is cancelled first. */
    java.util.concurrent.ScheduledFuture<?> abortAt(long deadlineNanoTime) {
        return DEADLINES.schedule(this::abort, deadlineNanoTime - System.nanoTime(),
                java.util.concurrent.TimeUnit.NANOSECONDS);
    }

    /** Closes the exchange's connection (if it has one yet); later exchanges of this call are refused. */
    synchronized void abort() {
        aborted = true;
        if (runtime != null) {
            runtime.discardEndpoint();
        }
    }
}
