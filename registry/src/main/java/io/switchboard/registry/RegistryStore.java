package io.switchboard.registry;

import java.util.List;

/**
 * Where the registry keeps its entries. Implementations are thread-safe. Named by a short key in
 * configuration: {@code memory} now; {@code file} and {@code zookeeper} are the durable ones.
 */
public interface RegistryStore extends AutoCloseable {
    /** Adds an instance; fails if an instance with the same name and id is bound. */
    void bind(ComponentEntry entry) throws AlreadyBoundException;

    /** Adds or replaces the instance with this name and id. */
    void rebind(ComponentEntry entry);

    /** Removes one instance, or all instances of {@code name} when {@code instanceId} is null; returns how many. */
    int unbind(String name, String instanceId);

    /** Every instance bound under {@code name}, oldest first; empty if none. */
    List<ComponentEntry> lookup(String name);

    /** Every entry, by name then age. */
    List<ComponentEntry> list();

    @Override
    default void close() {
    }

    /** Raised by {@link #bind} when the name and instance id are taken. */
    final class AlreadyBoundException extends Exception {
        public AlreadyBoundException(String message) {
            super(message);
        }
    }
}
