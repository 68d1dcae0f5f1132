package io.switchboard.registry.server;

import io.switchboard.registry.ComponentEntry;
import io.switchboard.registry.RegistryEvent;
import java.time.Duration;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Collection;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Set;
import java.util.UUID;

/**
 * The registry's side of watches: a bounded buffer of the latest changes, numbered by a
 * registry-wide version, and long polls that wait for the next one.
 *
 * <p>Changes are reported as "this instance is now X" or "this instance is gone"; the hub keeps
 * its own view of every instance and turns a report into an event only when the view changes. So
 * a source may report the same state twice (a ZooKeeper cache that re-reads after a reconnect, a
 * local write that the cache then sees too) and watchers still get each change once.
 *
 * <p>Versions count within one {@link #epoch()}, a random id per hub: a watcher that comes from
 * another registry server or from before a restart is told to {@code reset} rather than given
 * events that do not belong to its version.
 */
final class WatchHub implements AutoCloseable {
    /** One numbered change. {@code entry} is null for {@link RegistryEvent.Kind#GO}. */
    record Change(long version, RegistryEvent event) {
    }

    /** What a poll returns: the version to continue from, and either events or a reset. */
    record Poll(String epoch, long version, boolean reset, List<Change> changes) {
    }

    private record Key(String name, String instanceId) {
    }

    private final String epoch = UUID.randomUUID().toString();
    private final int capacity;
    private final int maxWaiting;
    private final ArrayDeque<Change> buffer = new ArrayDeque<>();
    private final Map<Key, ComponentEntry> view = new HashMap<>();
    private long version;
    /** The newest version no longer in the buffer: a watcher behind it has missed changes. */
    private long droppedUpTo;
    private int waiting;
    private boolean closed;
    private Runnable onChange;

    /**
     * @param maxWaiting polls that may wait at once; more are answered at once (each waiting poll
     *                   holds a thread of the SOAP server's pool)
     */
    WatchHub(Collection<ComponentEntry> initial, int capacity, int maxWaiting) {
        this.capacity = capacity;
        this.maxWaiting = maxWaiting;
        for (ComponentEntry e : initial) {
            view.put(new Key(e.name(), e.instanceId()), e.withoutSchema());
        }
    }

    String epoch() {
        return epoch;
    }

    synchronized long version() {
        return version;
    }

    /** The instance is bound now as {@code entry}: an appear or a change, or nothing if the hub saw it already. */
    synchronized void bound(ComponentEntry entry) {
        ComponentEntry now = entry.withoutSchema();
        ComponentEntry before = view.put(new Key(now.name(), now.instanceId()), now);
        if (before == null) {
            add(new RegistryEvent(RegistryEvent.Kind.APPEAR, now.name(), now.instanceId(), now));
        } else if (!before.equals(now)) {
            add(new RegistryEvent(RegistryEvent.Kind.CHANGE, now.name(), now.instanceId(), now));
        }
    }

    /** One instance left, or every instance of {@code name} when {@code instanceId} is null. */
    synchronized void gone(String name, String instanceId) {
        List<Key> keys = new ArrayList<>();
        if (instanceId == null) {
            view.keySet().stream().filter(k -> k.name().equals(name)).forEach(keys::add);
        } else {
            keys.add(new Key(name, instanceId));
        }
        for (Key k : keys) {
            ComponentEntry before = view.remove(k);
            if (before != null) {
                add(new RegistryEvent(RegistryEvent.Kind.GO, k.name(), k.instanceId(), before));
            }
        }
    }

    private void add(RegistryEvent event) {
        buffer.addLast(new Change(++version, event));
        while (buffer.size() > capacity) {
            droppedUpTo = buffer.removeFirst().version();
        }
        notifyAll();
        if (onChange != null) {
            onChange.run();
        }
    }

    /** Runs {@code hook} after every change, under the hub's lock: it must only signal, never wait. */
    synchronized void onChange(Runnable hook) {
        onChange = hook;
    }

    /**
     * Every instance of {@code names} (all when empty) bound now, as a {@code reset} poll whose
     * changes are an {@code APPEAR} each, at the current version: what a new watcher starts from.
     */
    synchronized Poll snapshot(Set<String> names) {
        List<Change> now = new ArrayList<>();
        view.forEach((k, e) -> {
            if (names.isEmpty() || names.contains(k.name())) {
                now.add(new Change(version, new RegistryEvent(RegistryEvent.Kind.APPEAR, k.name(), k.instanceId(), e)));
            }
        });
        return new Poll(epoch, version, true, now);
    }

    /**
     * The changes after {@code since} to the names asked for (all when {@code names} is empty),
     * waiting up to {@code wait} for one.
     */
    synchronized Poll poll(Set<String> names, String clientEpoch, Long since, Duration wait) {
        if (since == null || !epoch.equals(clientEpoch) || since > version || since < droppedUpTo) {
            return new Poll(epoch, version, true, List.of());
        }
        List<Change> found = matching(names, since);
        if (found.isEmpty() && !wait.isZero() && !closed && waiting < maxWaiting) {
            waiting++;
            try {
                long end = System.nanoTime() + wait.toNanos();
                long scanned = since;
                while (found.isEmpty() && !closed) {
                    long left = end - System.nanoTime();
                    if (left <= 0) {
                        break;
                    }
                    wait(Math.max(1, left / 1_000_000));
                    if (scanned < droppedUpTo) {
                        return new Poll(epoch, version, true, List.of());
                    }
                    found = matching(names, scanned);
                    scanned = version;
                }
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            } finally {
                waiting--;
            }
        }
        return new Poll(epoch, version, false, found);
    }

    private List<Change> matching(Set<String> names, long since) {
        // the changes after since are the buffer's tail: walk back to them, not over the whole buffer
        ArrayDeque<Change> out = new ArrayDeque<>();
        for (var it = buffer.descendingIterator(); it.hasNext(); ) {
            Change c = it.next();
            if (c.version() <= since) {
                break;
            }
            if (names.isEmpty() || names.contains(c.event().name())) {
                out.addFirst(c);
            }
        }
        return out.isEmpty() ? List.of() : new ArrayList<>(out);
    }

    /** Polls waiting for a change now. */
    synchronized int waiting() {
        return waiting;
    }

    /** Answers every waiting poll now: the registry is stopping. */
    @Override
    public synchronized void close() {
        closed = true;
        notifyAll();
    }

    @Override
    public String toString() {
        return "WatchHub[epoch=" + epoch + ", version=" + version + "]";
    }

    static Set<String> names(List<String> names) {
        return names == null ? Set.of() : Set.copyOf(names.stream().filter(Objects::nonNull).toList());
    }
}
