package io.switchboard.registry.server;

import io.switchboard.idl.runtime.DeclaredFault;
import io.switchboard.registry.ComponentEntry;
import io.switchboard.registry.store.RegistryStore;
import java.util.Optional;
import java.util.function.BiConsumer;
import org.slf4j.Logger;

/**
 * Leases: an entry bound with {@code leaseSeconds > 0} lives until that many seconds pass without
 * a renewal; {@link #sweep} drops it then. Deadlines live in memory ({@link Leases}), for the
 * leases this server granted or adopted; after a restart over a store of its own (not
 * {@link RegistryStore#shared() shared}) every leased entry gets one full lease in which its server
 * must renew. On a shared store a renewal also takes the entry over from the registry server that
 * held it before.
 */
final class RegistryLeases {
    private final RegistryStore store;
    private final WriteCredential credential;
    /** The deadlines, and the lock every write holds: a sweep never falls between a renew's check and its answer. */
    private final Leases leases;
    private final CallFigures figures;
    private final RegistryWatches watches;
    /** The registry service's logger: operators turn that one name up to follow leases. */
    private final Logger log;

    RegistryLeases(RegistryStore store, WriteCredential credential, Leases leases, CallFigures figures,
                   RegistryWatches watches, Logger log) {
        this.log = log;
        this.store = store;
        this.credential = credential;
        this.leases = leases;
        this.figures = figures;
        this.watches = watches;
    }

    /** Grants every leased entry of a store this server alone writes one full lease: it may have restarted. */
    void restore() {
        if (store.shared()) {
            return;
        }
        synchronized (leases) {
            store.list().stream().filter(ComponentEntry::leased).forEach(leases::grant);
        }
        if (leases.size() > 0) {
            log.info("{} leased entries restored from the store; each has one lease to be renewed", leases.size());
        }
    }

    /**
     * Extends the lease of one instance. False when the registry does not hold the instance: its
     * lease ran out, or the registry lost it; the server then binds it again. Refusals are the
     * operation's {@code fault}.
     */
    <X extends DeclaredFault> boolean renew(String name, String instanceId, String credential,
                                            RegistryFault<?, X> fault) throws X {
        this.credential.check(credential, fault);
        if (name == null || instanceId == null) {
            throw fault.of(RegistryFault.INVALID, "renew needs a name and an instance id");
        }
        try {
            synchronized (leases) {
                // the store has the last word: an entry removed behind this server's back (another
                // registry server, an operator) is reported gone so that its server binds it again
                Optional<ComponentEntry> held = store.find(name, instanceId);
                if (held.isEmpty()) {
                    leases.end(name, instanceId);
                    return false;
                }
                boolean granted = leases.renew(name, instanceId);
                if (!granted) {
                    // a lease this server did not grant: bound through another registry server on a
                    // shared store. Adopt it
                    leases.grant(held.get());
                }
                // and make sure the entry lives with this server in the store: the other server, no
                // longer renewed, must not expire it, nor may its ZooKeeper session take it along
                // when it dies or is cut off. Also when this server still holds a lease of its own:
                // the component may have renewed through the other server for a while (this one
                // was unreachable or slow), which then took the entry over
                if (store.shared() && (!granted || !store.heldHere(name, instanceId))) {
                    store.rebind(held.get());
                    log.info("took {} the lease of {} ({}) from another registry server", granted ? "back" : "over",
                            name, instanceId);
                } else {
                    log.debug("renewed {} ({})", name, instanceId);
                }
                return true;
            }
        } catch (RegistryStore.StoreException ex) {
            // the component renewed; only the store could not confirm it. The lease held here runs on,
            // so that the registry's own outage (a ZooKeeper election) does not drop entries whose
            // servers kept renewing; one whose server stopped still runs out a lease later
            synchronized (leases) {
                leases.renew(name, instanceId);
            }
            throw fault.of(RegistryFault.UNAVAILABLE, ex.getMessage());
        }
    }

    /**
     * Drops every entry whose lease ran out; returns how many. A removal that fails (store
     * unreachable) is tried again at the next sweep.
     */
    int sweep() {
        int dropped = 0;
        synchronized (leases) {
            for (Leases.Key k : leases.expired()) {
                try {
                    boolean removed = store.expire(k.name(), k.instanceId());
                    leases.end(k.name(), k.instanceId());
                    if (removed) {
                        dropped++;
                        watches.removed(k.name(), k.instanceId());
                        log.info("lease of {} ({}) ran out; entry dropped", k.name(), k.instanceId());
                    } else {
                        log.info("lease of {} ({}) ran out here; the entry is another registry server's now, "
                                + "or gone", k.name(), k.instanceId());
                    }
                } catch (RuntimeException e) {
                    log.warn("could not drop {} ({}) whose lease ran out; will try again: {}", k.name(),
                            k.instanceId(), e.getMessage());
                }
            }
            figures.forgetUnleased();
        }
        return dropped;
    }

    /** Calls {@code each} with every lease this server holds, under the lease lock. */
    void forEach(BiConsumer<Leases.Key, Leases.View> each) {
        synchronized (leases) {
            leases.view().forEach(each);
        }
    }
}
