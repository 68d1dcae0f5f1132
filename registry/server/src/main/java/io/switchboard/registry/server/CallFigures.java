package io.switchboard.registry.server;

import io.switchboard.idl.runtime.DeclaredFault;
import io.switchboard.registry.CallSummary;
import io.switchboard.registry.wire.CallStats;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;

/**
 * The call figures each leased instance last reported with its renewal, kept in memory for as
 * long as this server holds the lease (the console shows them), and how many reports arrived.
 */
final class CallFigures {
    /** Figures an instance reported, and when the registry received them. */
    record Received(CallSummary stats, Instant at) {
    }

    private final Leases leases;
    private final Clock clock;
    private final Map<Leases.Key, Received> last = new ConcurrentHashMap<>();
    /** Guards {@link #count}; waited on by {@link #await}. */
    private final Object arrivals = new Object();
    private long count;

    /** {@code leases}: the lease lock and the leases figures live with. */
    CallFigures(Leases leases, Clock clock) {
        this.leases = leases;
        this.clock = clock;
    }

    /** The figures in {@code stats}; the operation's {@code invalid} fault when they are out of bounds. */
    static <X extends DeclaredFault> CallSummary read(CallStats stats, RegistryFault<?, X> fault) throws X {
        try {
            return CallSummary.fromWire(stats);
        } catch (IllegalArgumentException e) {
            throw fault.of(RegistryFault.INVALID, "the call figures are not valid: " + e.getMessage());
        }
    }

    /** Keeps {@code figures} as the instance's latest if this server holds its lease, and counts the report. */
    void record(Leases.Key instance, CallSummary figures) {
        synchronized (leases) {
            if (leases.holds(instance)) {
                last.put(instance, new Received(figures, clock.instant()));
            }
        }
        synchronized (arrivals) {
            count++;
            arrivals.notifyAll();
        }
    }

    /** The instance's latest figures, or null when it reported none. */
    Received latest(Leases.Key instance) {
        return last.get(instance);
    }

    /** Drops the figures of instances whose lease this server no longer holds; call it under the lease lock. */
    void forgetUnleased() {
        last.keySet().removeIf(k -> !leases.holds(k));
    }

    /** Waits until {@code more} reports beyond the first {@code seen} have arrived, or {@code timeout} passes; true if they did. */
    boolean await(long seen, int more, Duration timeout) throws InterruptedException {
        long deadline = System.nanoTime() + timeout.toNanos();
        synchronized (arrivals) {
            while (count < seen + more) {
                long left = deadline - System.nanoTime();
                if (left <= 0) {
                    return false;
                }
                TimeUnit.NANOSECONDS.timedWait(arrivals, left);
            }
            return true;
        }
    }

    /** Reports received so far. */
    long count() {
        synchronized (arrivals) {
            return count;
        }
    }
}
