package io.switchboard.registry.server;

import io.switchboard.registry.ComponentEntry;
import java.time.Clock;
import java.time.Instant;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

/**
 * The deadlines of the leases one registry server granted. Kept in memory, beside the store: a
 * renew moves a deadline and never writes the store. Not thread-safe: this object is also the
 * registry's write lock, held around every use ({@link RegistryWrites}, {@link RegistryLeases},
 * {@link CallFigures}).
 */
final class Leases {
    record Key(String name, String instanceId) {
    }

    private record Lease(Instant deadline, int seconds, Instant renewedAt) {
    }

    /** One lease as the console shows it: its length, when it was last granted or renewed, its deadline. */
    record View(int seconds, Instant renewedAt, Instant deadline) {
    }

    private final Clock clock;
    private final Map<Key, Lease> deadlines = new HashMap<>();

    Leases(Clock clock) {
        this.clock = clock;
    }

    /** Starts or extends the lease of {@code e} by its length; an entry without a lease has none. */
    void grant(ComponentEntry e) {
        Key k = new Key(e.name(), e.instanceId());
        if (e.leased()) {
            Instant now = clock.instant();
            deadlines.put(k, new Lease(now.plusSeconds(e.leaseSeconds()), e.leaseSeconds(), now));
        } else {
            deadlines.remove(k);
        }
    }

    /** Forgets one instance, or every instance of {@code name} when {@code instanceId} is null. */
    void end(String name, String instanceId) {
        if (instanceId == null) {
            deadlines.keySet().removeIf(k -> k.name().equals(name));
        } else {
            deadlines.remove(new Key(name, instanceId));
        }
    }

    /** Extends a lease this server granted by its length; false if it holds none for the instance. */
    boolean renew(String name, String instanceId) {
        Key k = new Key(name, instanceId);
        Lease l = deadlines.get(k);
        if (l == null) {
            return false;
        }
        Instant now = clock.instant();
        deadlines.put(k, new Lease(now.plusSeconds(l.seconds()), l.seconds(), now));
        return true;
    }

    /** The leases whose deadline has passed; they stay until {@link #end} (so a failed removal is retried). */
    List<Key> expired() {
        Instant now = clock.instant();
        List<Key> out = new ArrayList<>();
        deadlines.forEach((k, lease) -> {
            if (!lease.deadline().isAfter(now)) {
                out.add(k);
            }
        });
        return out;
    }

    /** Whether this server holds a lease for the instance. */
    boolean holds(Key k) {
        return deadlines.containsKey(k);
    }

    /** Every lease held, as a copy. */
    Map<Key, View> view() {
        Map<Key, View> out = new HashMap<>();
        deadlines.forEach((k, l) -> out.put(k, new View(l.seconds(), l.renewedAt(), l.deadline())));
        return out;
    }

    int size() {
        return deadlines.size();
    }
}
