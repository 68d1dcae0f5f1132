package io.switchboard.registry.store;

import io.switchboard.registry.ComponentEntry;
import java.util.List;
import java.util.Optional;

/**
 * Where the registry keeps its entries. Implementations are thread-safe and hold entries only
 * (never a credential). Named by a short key in configuration ({@link RegistryStores#open}):
 * {@code memory} ({@link InMemoryRegistryStore}), {@code file} ({@link FileRegistryStore}, the
 * standalone registry's default) and {@code zookeeper} ({@link ZooKeeperRegistryStore}, shared by
 * several registry servers).
 *
 * <p>A store keeps an entry's {@link ComponentEntry#leaseSeconds() lease length} but not its
 * deadline: deadlines live in the registry server that granted them (see {@link RegistryService}),
 * so a heartbeat never costs a store write.
 */
public interface RegistryStore extends AutoCloseable {
    /** Adds an instance; fails if an instance with the same name and id is bound. */
    void bind(ComponentEntry entry) throws AlreadyBoundException;

    /** Adds or replaces the instance with this name and id. */
    void rebind(ComponentEntry entry);

    /** Removes one instance, or all instances of {@code name} when {@code instanceId} is null; returns how many. */
    int unbind(String name, String instanceId);

    /** Every instance bound under {@code name}, oldest first, in a list no one may change; empty if none. */
    List<ComponentEntry> lookup(String name);

    /** Every entry, by name then age. */
    List<ComponentEntry> list();

    /** How many entries {@link #list} would return; a store that can count without listing says so here. */
    default int size() {
        return list().size();
    }

    /** The instance {@code instanceId} of {@code name}, if bound. */
    default Optional<ComponentEntry> find(String name, String instanceId) {
        return lookup(name).stream().filter(e -> e.instanceId().equals(instanceId)).findFirst();
    }

    /**
     * {@link #lookup} if the store can answer at once, from memory, without waiting on I/O, another
     * server or a write under way (beyond a lock held for a moment); null when it cannot now (the
     * caller then calls {@link #lookup} where waiting is fine). A registry answers such lookups
     * on its network threads instead of handing each to a read thread. Default: null.
     */
    default List<ComponentEntry> lookupNow(String name) {
        return null;
    }

    /**
     * True when other registry servers write the same entries (ZooKeeper). A registry server then
     * times out only the leases it granted itself, never the entries it merely finds in the store.
     */
    default boolean shared() {
        return false;
    }

    /**
     * Whether the instance lives with this registry server, so that it is this server's lease that
     * keeps it: false when it is not bound, or when a shared store holds it for another server
     * (ZooKeeper: an ephemeral node of another session, after that server took it over). A server
     * renewing an instance that is held elsewhere must take it back ({@link #rebind}), or the other
     * server, no longer renewed, expires it. Default: whether it is bound.
     */
    default boolean heldHere(String name, String instanceId) {
        return find(name, instanceId).isPresent();
    }

    /**
     * Removes an instance whose lease, granted by this registry server, ran out; returns whether
     * it removed it. A shared store leaves an instance alone that another registry server has
     * taken over since (its component now renews there): removing it would drop an entry that is
     * being renewed. Default: {@link #unbind}.
     */
    default boolean expire(String name, String instanceId) {
        return unbind(name, instanceId) > 0;
    }

    /**
     * Asks the store to report every change to {@code sink}, also those made by other registry
     * servers; false when it cannot (then the registry reports its own writes, which are all
     * there are). A store that says true reports the current entries once as well; reporting a
     * state twice is harmless. Per instance, reports come in the order of the changes and the last
     * one is the current state; a store may fold changes it reads late into the state it reads
     * then (ZooKeeper: a node's data is read after its change is signalled, so a rebind followed
     * by an unbind may reach the sink as the unbind alone), but it never reports a state older
     * than one it reported before.
     */
    default boolean reportChanges(ChangeSink sink) {
        return false;
    }

    @Override
    default void close() {
    }

    /** Where a store reports changes (see {@link #reportChanges}). Called from the store's own thread. */
    interface ChangeSink {
        /** The instance is bound now as {@code entry}. */
        void bound(ComponentEntry entry);

        /** The instance left the store. */
        void gone(String name, String instanceId);
    }

    /** Raised by {@link #bind} when the name and instance id are taken. */
    final class AlreadyBoundException extends Exception {
        public AlreadyBoundException(String message) {
            super(message);
        }
    }

    /**
     * The store cannot do what was asked: its file is unreadable or cannot be written, or ZooKeeper
     * cannot be reached. The message names the file or the ensemble; nothing was changed.
     */
    class StoreException extends RuntimeException {
        public StoreException(String message, Throwable cause) {
            super(message, cause);
        }

        public StoreException(String message) {
            super(message);
        }
    }
}
