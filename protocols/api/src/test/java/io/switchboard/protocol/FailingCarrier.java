package io.switchboard.protocol;

import java.util.concurrent.Callable;

/** A carrier that fails, found through this module's test services file: the work goes over without it. */
public final class FailingCarrier implements TaskContextCarrier {
    static volatile int asked;

    @Override
    public Runnable carry(Runnable task) {
        asked++;
        throw new IllegalStateException("a tracing library's bug");
    }

    @Override
    public <T> Callable<T> carry(Callable<T> task) {
        asked++;
        return null;
    }
}
