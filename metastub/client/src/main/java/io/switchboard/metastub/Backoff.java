package io.switchboard.metastub;

import java.time.Duration;
import java.util.Objects;
import java.util.function.LongSupplier;

/**
 * How long something that failed is avoided: {@code initial} after the first failure in a row,
 * doubling with each further one, at most {@code max}. Written once for the protocols a
 * meta-stub avoids ({@link ProtocolHealth}) and the replicas a replicated channel avoids.
 * Immutable; the state (failures in a row, until when) stays with its user.
 *
 * <pre>{@code
 * Backoff backoff = new Backoff(Duration.ofSeconds(1), Duration.ofSeconds(30), System::nanoTime);
 * long until = backoff.until(failures);          // after the failures-th failure in a row
 * boolean stillAvoided = backoff.before(until);
 * }</pre>
 */
public final class Backoff {
    private final long initialNanos;
    private final long maxNanos;
    private final LongSupplier clock;

    public Backoff(Duration initial, Duration max, LongSupplier nanoClock) {
        this.initialNanos = initial.toNanos();
        this.maxNanos = max.toNanos();
        this.clock = Objects.requireNonNull(nanoClock, "nanoClock");
    }

    /** The clock's time now, in nanoseconds. */
    public long now() {
        return clock.getAsLong();
    }

    /** The time (on the clock) until which to avoid after {@code failures} (1 or more) failures in a row. */
    public long until(int failures) {
        return now() + Math.min(maxNanos, initialNanos << Math.min(failures - 1, 20));
    }

    /** Whether it is still before {@code until} at {@code now}. */
    public static boolean before(long now, long until) {
        return now - until < 0;
    }

    /** Whether it is still before {@code until} now. */
    public boolean before(long until) {
        return before(now(), until);
    }
}
