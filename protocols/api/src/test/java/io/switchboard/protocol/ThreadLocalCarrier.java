package io.switchboard.protocol;

import java.util.concurrent.Callable;

/** A carrier of one thread-local string, found through this module's test services file. */
public final class ThreadLocalCarrier implements TaskContextCarrier {
    static final ThreadLocal<String> VALUE = new ThreadLocal<>();

    @Override
    public Runnable carry(Runnable task) {
        String value = VALUE.get();
        return () -> {
            String before = VALUE.get();
            VALUE.set(value);
            try {
                task.run();
            } finally {
                VALUE.set(before);
            }
        };
    }

    @Override
    public <T> Callable<T> carry(Callable<T> task) {
        String value = VALUE.get();
        return () -> {
            String before = VALUE.get();
            VALUE.set(value);
            try {
                return task.call();
            } finally {
                VALUE.set(before);
            }
        };
    }
}
