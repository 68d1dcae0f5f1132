package io.switchboard.registry.server;

import io.switchboard.idl.runtime.DeclaredFault;
import io.switchboard.registry.ComponentEntry;
import io.switchboard.registry.store.RegistryStore;
import io.switchboard.registry.wire.BindFaultException;
import io.switchboard.registry.wire.Entry;
import io.switchboard.registry.wire.RebindFaultException;
import io.switchboard.registry.wire.UnbindFaultException;
import java.time.Clock;
import org.slf4j.Logger;

/**
 * Bind, rebind and unbind. Each checks the credential and the entry ({@link EntryRules}), then,
 * under the lease lock, writes the store, grants or ends the lease and tells the watchers, so that
 * a sweep or a renewal never sees one without the other.
 */
final class RegistryWrites {
    /** One store write of an entry: a bind or a rebind. */
    private interface StoreWrite {
        void apply(ComponentEntry entry) throws RegistryStore.AlreadyBoundException;
    }

    private final RegistryStore store;
    private final WriteCredential credential;
    private final Clock clock;
    private final Leases leases;
    private final CallFigures figures;
    private final RegistryWatches watches;
    /** The registry service's logger: every write is logged under that one name. */
    private final Logger log;

    RegistryWrites(RegistryStore store, WriteCredential credential, Clock clock, Leases leases, CallFigures figures,
                   RegistryWatches watches, Logger log) {
        this.log = log;
        this.store = store;
        this.credential = credential;
        this.clock = clock;
        this.leases = leases;
        this.figures = figures;
        this.watches = watches;
    }

    void bind(Entry entry, String credential) throws BindFaultException {
        ComponentEntry e = write(entry, credential, RegistryFault.BIND, store::bind);
        log.info("bound {} ({}) at {}", e.name(), e.instanceId(), e.endpoints());
    }

    void rebind(Entry entry, String credential) throws RebindFaultException {
        ComponentEntry e = write(entry, credential, RegistryFault.REBIND, store::rebind);
        log.info("rebound {} ({}) at {}", e.name(), e.instanceId(), e.endpoints());
    }

    /** Removes one instance, or every instance of {@code name} when {@code instanceId} is null; returns how many. */
    int unbind(String name, String instanceId, String credential) throws UnbindFaultException {
        this.credential.check(credential, RegistryFault.UNBIND);
        if (name == null) {
            throw RegistryFault.UNBIND.of(RegistryFault.INVALID, "the name is missing");
        }
        int removed;
        try {
            synchronized (leases) {
                removed = store.unbind(name, instanceId);
                leases.end(name, instanceId);
                figures.forgetUnleased();
                watches.removed(name, instanceId);
            }
        } catch (RegistryStore.StoreException ex) {
            throw RegistryFault.UNBIND.of(RegistryFault.UNAVAILABLE, ex.getMessage());
        }
        if (removed > 0) {
            log.info("unbound {} ({}): {} instance(s)", name, instanceId == null ? "all" : instanceId, removed);
        }
        return removed;
    }

    private <X extends DeclaredFault> ComponentEntry write(Entry entry, String credential, RegistryFault<?, X> fault,
                                                           StoreWrite write) throws X {
        this.credential.check(credential, fault);
        ComponentEntry e;
        try {
            e = EntryRules.check(entry).withBoundAt(clock.instant());
        } catch (IllegalArgumentException ex) {
            throw fault.of(RegistryFault.INVALID, ex.getMessage());
        }
        try {
            synchronized (leases) {
                write.apply(e);
                leases.grant(e);
                watches.wrote(e);
            }
        } catch (RegistryStore.AlreadyBoundException ex) {
            throw fault.of(RegistryFault.ALREADY_BOUND, ex.getMessage());
        } catch (IllegalArgumentException ex) {
            throw fault.of(RegistryFault.INVALID, ex.getMessage());
        } catch (RegistryStore.StoreException ex) {
            throw fault.of(RegistryFault.UNAVAILABLE, ex.getMessage());
        }
        return e;
    }
}
