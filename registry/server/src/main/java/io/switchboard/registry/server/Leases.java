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
 * renew moves a deadline and never writes the store. Not thread-safe; {@link RegistryService}
 * holds its write lock around every use.
 */
final class Leases {
    record Key(String name, String instanceId) {
    }

    private record Lease(Instant deadline, int seconds) {
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
            deadlines.put(k, new Lease(clock.instant().plusSeconds(e.leaseSeconds()), e.leaseSeconds()));
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
        deadlines.put(k, new Lease(clock.instant().plusSeconds(l.seconds()), l.seconds()));
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

    int size() {
        return deadlines.size();
    }
}
