package io.switchboard.registry.store;

import io.switchboard.registry.ComponentEntry;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.TreeMap;

/** Entries in memory: gone when the registry stops. Key {@code memory}. */
public final class InMemoryRegistryStore implements RegistryStore {
    private final Map<String, Map<String, ComponentEntry>> byName = new TreeMap<>();
    /**
     * Each name's instances as {@link #lookup} answered them last, until a write to the name:
     * a name looked up over and over is not copied each time, and a caller can tell by identity
     * that nothing changed.
     */
    private final Map<String, List<ComponentEntry>> looked = new java.util.HashMap<>();

    @Override
    public synchronized void bind(ComponentEntry entry) throws AlreadyBoundException {
        Map<String, ComponentEntry> instances = byName.computeIfAbsent(entry.name(), n -> new LinkedHashMap<>());
        if (instances.containsKey(entry.instanceId())) {
            throw new AlreadyBoundException(entry.name() + " instance " + entry.instanceId() + " is already bound");
        }
        instances.put(entry.instanceId(), entry);
        looked.remove(entry.name());
    }

    @Override
    public synchronized void rebind(ComponentEntry entry) {
        byName.computeIfAbsent(entry.name(), n -> new LinkedHashMap<>()).put(entry.instanceId(), entry);
        looked.remove(entry.name());
    }

    @Override
    public synchronized int unbind(String name, String instanceId) {
        Map<String, ComponentEntry> instances = byName.get(name);
        if (instances == null) {
            return 0;
        }
        looked.remove(name);
        int removed;
        if (instanceId == null) {
            removed = instances.size();
            instances.clear();
        } else {
            removed = instances.remove(instanceId) == null ? 0 : 1;
        }
        if (instances.isEmpty()) {
            byName.remove(name);
        }
        return removed;
    }

    @Override
    public synchronized List<ComponentEntry> lookup(String name) {
        List<ComponentEntry> last = looked.get(name);
        if (last != null) {
            return last;
        }
        Map<String, ComponentEntry> instances = byName.get(name);
        if (instances == null) {
            return List.of();
        }
        List<ComponentEntry> now = List.copyOf(instances.values());
        looked.put(name, now);
        return now;
    }

    /** Every read is a map lookup under a lock that writes hold only for a map update. */
    @Override
    public List<ComponentEntry> lookupNow(String name) {
        return lookup(name);
    }

    @Override
    public synchronized Optional<ComponentEntry> find(String name, String instanceId) {
        Map<String, ComponentEntry> instances = byName.get(name);
        return Optional.ofNullable(instances == null ? null : instances.get(instanceId));
    }

    /** How many instances {@link #unbind} would remove. */
    public synchronized int count(String name, String instanceId) {
        Map<String, ComponentEntry> instances = byName.get(name);
        if (instances == null) {
            return 0;
        }
        return instanceId == null ? instances.size() : instances.containsKey(instanceId) ? 1 : 0;
    }

    /** Counted over the names, not copied: the registry's metrics ask on every scrape. */
    @Override
    public synchronized int size() {
        int n = 0;
        for (Map<String, ComponentEntry> instances : byName.values()) {
            n += instances.size();
        }
        return n;
    }

    @Override
    public synchronized List<ComponentEntry> list() {
        // byName is sorted by name already, and each name's instances by age
        List<ComponentEntry> all = new ArrayList<>(size());
        byName.values().forEach(m -> all.addAll(m.values()));
        return all;
    }
}
