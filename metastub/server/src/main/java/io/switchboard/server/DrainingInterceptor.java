package io.switchboard.server;

import io.switchboard.idl.runtime.DeclaredFault;
import io.switchboard.protocol.DrainingException;
import io.switchboard.protocol.ServerCall;
import io.switchboard.protocol.ServerInterceptor;
import java.time.Duration;

/**
 * The step of a component server's chain that a graceful close turns on: it counts the calls under
 * way and, once told to ({@link #refuseNewCalls}), refuses new ones with a
 * {@link DrainingException}, which clients treat as not delivered and take to another replica.
 * It sits after the de-duplicator, so that a repeat of a call this server ran still gets its
 * outcome instead of running again elsewhere. One instance per server, in every chain.
 */
final class DrainingInterceptor implements ServerInterceptor {
    private boolean refusing;
    private int running;
    private long refused;

    @Override
    public Object intercept(ServerCall call, Chain next) throws DeclaredFault {
        synchronized (this) {
            if (refusing) {
                refused++;
                throw new DrainingException(call.protocol(), call.component() + " is draining (its server is "
                        + "shutting down): " + call.operation().name() + " did not run; another replica may take it",
                        null);
            }
            running++;
        }
        try {
            return next.proceed(call);
        } finally {
            synchronized (this) {
                if (--running == 0 && refusing) {
                    notifyAll();
                }
            }
        }
    }

    /** From now on, new calls are refused; returns the calls under way now. */
    synchronized int refuseNewCalls() {
        refusing = true;
        return running;
    }

    /** Calls refused so far. */
    synchronized long refused() {
        return refused;
    }

    /** Calls under way now. */
    synchronized int running() {
        return running;
    }

    /** Waits until no call is under way, at most {@code timeout}; whether none is. */
    synchronized boolean awaitIdle(Duration timeout) throws InterruptedException {
        long end = System.nanoTime() + timeout.toNanos();
        while (running > 0) {
            long left = end - System.nanoTime();
            if (left <= 0) {
                return false;
            }
            java.util.concurrent.TimeUnit.NANOSECONDS.timedWait(this, left);
        }
        return true;
    }

    @Override
    public String toString() {
        return "DrainingInterceptor";
    }
}
