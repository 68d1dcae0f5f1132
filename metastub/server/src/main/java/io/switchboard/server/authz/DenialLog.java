package io.switchboard.server.authz;

import java.util.Iterator;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.Consumer;
import java.util.function.LongSupplier;

/**
 * Logs denied calls at most once a minute per identity and path, so that a caller hammering a
 * path it may not call cannot flood the log; the next line says how many were left out. Keeps at
 * most {@link #MAX_KEYS} identities and paths; past that, lines for new ones are left out (and
 * counted) until older ones age out. Thread-safe.
 */
final class DenialLog {
    static final int MAX_KEYS = 10_000;
    static final long INTERVAL_NANOS = TimeUnit.MINUTES.toNanos(1);

    private record Key(String identity, String path) {
    }

    private static final class Slot {
        final long loggedAt;
        final AtomicLong leftOut = new AtomicLong();

        Slot(long loggedAt) {
            this.loggedAt = loggedAt;
        }
    }

    private final LongSupplier nanoClock;
    private final Consumer<String> sink;
    private final Map<Key, Slot> slots = new ConcurrentHashMap<>();
    private final AtomicLong overflow = new AtomicLong();

    /** @param nanoClock {@link System#nanoTime()} in service; a hand-moved clock in tests */
    DenialLog(LongSupplier nanoClock, Consumer<String> sink) {
        this.nanoClock = nanoClock;
        this.sink = sink;
    }

    /** One denial of {@code path} to {@code identity}; logs it unless one was logged in the last minute. */
    void denied(String identity, String path, String reason) {
        long now = nanoClock.getAsLong();
        Key key = new Key(identity, path);
        Slot slot = slots.get(key);
        if (slot != null && now - slot.loggedAt < INTERVAL_NANOS) {
            slot.leftOut.incrementAndGet();
            return;
        }
        if (slot == null && slots.size() >= MAX_KEYS && !evictOlderThanInterval(now)) {
            overflow.incrementAndGet();
            return;
        }
        Slot fresh = new Slot(now);
        // one thread wins the minute: the others count themselves as left out
        boolean won = slot == null ? slots.putIfAbsent(key, fresh) == null : slots.replace(key, slot, fresh);
        if (!won) {
            Slot current = slots.get(key);
            if (current != null) {
                current.leftOut.incrementAndGet();
            }
            return;
        }
        long before = slot == null ? 0 : slot.leftOut.get();
        long lost = overflow.getAndSet(0);
        sink.accept("denied " + path + " to " + identity + ": " + reason
                + (before > 0 ? " (" + before + " more denial(s) of it in the last minute not logged)" : "")
                + (lost > 0 ? " (" + lost + " denial(s) of other callers or paths not logged: too many to track)" : ""));
    }

    /** Drops the slots whose minute has passed; whether there is room now. */
    private boolean evictOlderThanInterval(long now) {
        for (Iterator<Slot> it = slots.values().iterator(); it.hasNext(); ) {
            if (now - it.next().loggedAt >= INTERVAL_NANOS) {
                it.remove();
            }
        }
        return slots.size() < MAX_KEYS;
    }
}
