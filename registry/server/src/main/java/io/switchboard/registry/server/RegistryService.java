package io.switchboard.registry.server;

import io.switchboard.registry.CallSummary;
import io.switchboard.registry.store.RegistryStore;
import io.switchboard.registry.wire.BindFaultException;
import io.switchboard.registry.wire.CallStats;
import io.switchboard.registry.wire.Entry;
import io.switchboard.registry.wire.LookupLeanFaultException;
import io.switchboard.registry.wire.LookupLeanResponse;
import io.switchboard.registry.wire.RebindFaultException;
import io.switchboard.registry.wire.Registry;
import io.switchboard.registry.wire.RenewFaultException;
import io.switchboard.registry.wire.RenewWithStatsFaultException;
import io.switchboard.registry.wire.UnbindFaultException;
import io.switchboard.registry.wire.WatchResponse;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The registry component: checks every write (credential, well-formed entry, readable interface
 * schema) and keeps entries in a {@link RegistryStore}. Lookups and listings are open.
 *
 * <p>Leases: an entry bound with {@code leaseSeconds > 0} lives until that many seconds pass
 * without a {@code renew}; {@link #sweep()} (run by {@link RegistryServer} every second) drops it
 * then. Deadlines are kept here, in memory, for the leases this server granted; after a restart
 * over a store of its own (not {@link RegistryStore#shared() shared}) every leased entry gets one
 * full lease in which its server must renew. The clock is injected so that tests can move time.
 *
 * <p>One class per concern does the work: {@link RegistryWrites} (bind, rebind, unbind),
 * {@link RegistryLeases} (renew, sweep), {@link RegistryReads} (lookup, list),
 * {@link RegistryWatches} (the change feed and the SOAP long poll) and {@link CallFigures} (what
 * instances report with their renewals); this class composes them behind the {@code Registry} interface.
 *
 * <pre>{@code
 * RegistryService registry = new RegistryService(FileRegistryStore.open(path), secret, Clock.systemUTC());
 * }</pre>
 */
public final class RegistryService implements Registry {
    private static final Logger LOG = LoggerFactory.getLogger(RegistryService.class);

    private final RegistryStore store;
    private final Clock clock;
    private final WriteCredential credential;
    private final RegistryWatches watches;
    private final CallFigures figures;
    private final RegistryLeases leases;
    private final RegistryWrites writes;
    private final RegistryReads reads;

    /**
     * @param secret the shared secret writes must carry, or null to accept unauthenticated writes
     *               (a warning is logged once)
     */
    public RegistryService(RegistryStore store, String secret, Clock clock) {
        this(store, secret, clock, false);
    }

    /**
     * As {@link #RegistryService(RegistryStore, String, Clock)}; {@code policyDecidesWrites}: an
     * authorization policy says who may write, so writes without a secret are not open (no warning).
     */
    public RegistryService(RegistryStore store, String secret, Clock clock, boolean policyDecidesWrites) {
        this.store = store;
        this.clock = clock;
        this.credential = new WriteCredential(secret);
        if (secret == null && !policyDecidesWrites) {
            LOG.warn("registry accepts writes without a credential; set a shared secret or a policy to secure it");
        }
        Leases held = new Leases(clock);
        this.watches = new RegistryWatches(store);
        this.figures = new CallFigures(held, clock);
        this.leases = new RegistryLeases(store, credential, held, figures, watches, LOG);
        this.writes = new RegistryWrites(store, credential, clock, held, figures, watches, LOG);
        this.reads = new RegistryReads(store);
        leases.restore();
    }

    public RegistryStore store() {
        return store;
    }

    @Override
    public void bind(Entry entry, String credential) throws BindFaultException {
        writes.bind(entry, credential);
    }

    @Override
    public void rebind(Entry entry, String credential) throws RebindFaultException {
        writes.rebind(entry, credential);
    }

    @Override
    public int unbind(String name, String instanceId, String credential) throws UnbindFaultException {
        return writes.unbind(name, instanceId, credential);
    }

    /**
     * Extends the lease of one instance. False when the registry does not hold the instance: its
     * lease ran out, or the registry lost it; the server then binds it again.
     */
    @Override
    public boolean renew(String name, String instanceId, String credential) throws RenewFaultException {
        return leases.renew(name, instanceId, credential, RegistryFault.RENEW);
    }

    /**
     * {@link #renew} with the instance's call figures, which the console shows until the next
     * report (kept in memory only, for as long as this server holds the lease). Figures out of
     * bounds are refused ({@code invalid}) and the lease is then not renewed: the server renews
     * again without them.
     */
    @Override
    public boolean renewWithStats(String name, String instanceId, String credential, CallStats stats)
            throws RenewWithStatsFaultException {
        this.credential.check(credential, RegistryFault.RENEW_WITH_STATS);   // before the figures are read
        CallSummary summary = CallFigures.read(stats, RegistryFault.RENEW_WITH_STATS);
        boolean bound = leases.renew(name, instanceId, credential, RegistryFault.RENEW_WITH_STATS);
        if (bound) {
            figures.record(new Leases.Key(name, instanceId), summary);
        }
        return bound;
    }

    /** Call figures an instance reported, and when the registry received them. */
    public record Report(CallSummary stats, Instant receivedAt) {
    }

    /** An instance's lease and the figures it last reported (null when it reports none), for the console. */
    public record Live(int leaseSeconds, Instant renewedAt, Instant deadline, Report report) {
    }

    /** Every lease this server holds, with its instance's last report; keyed by name, then instance id. */
    public Map<String, Map<String, Live>> live() {
        Map<String, Map<String, Live>> out = new TreeMap<>();
        leases.forEach((k, v) -> {
            CallFigures.Received last = figures.latest(k);
            Report report = last == null ? null : new Report(last.stats(), last.at());
            out.computeIfAbsent(k.name(), n -> new TreeMap<>())
                    .put(k.instanceId(), new Live(v.seconds(), v.renewedAt(), v.deadline(), report));
        });
        return out;
    }

    /** The clock leases are measured by. */
    public Clock clock() {
        return clock;
    }

    /**
     * Waits until {@code more} reports beyond those received before the call have arrived, or
     * {@code timeout} passes; true if they did. For tests: "the next renewal has carried the figures".
     */
    public boolean awaitReports(long seen, int more, Duration timeout) throws InterruptedException {
        return figures.await(seen, more, timeout);
    }

    /** How many reports have arrived so far (see {@link #awaitReports}). */
    public long reportCount() {
        return figures.count();
    }

    /**
     * Drops every entry whose lease ran out; returns how many. A removal that fails (store
     * unreachable) is tried again at the next sweep.
     */
    public int sweep() {
        return leases.sweep();
    }

    /**
     * Long poll: the changes after {@code sinceVersion} to {@code names} (all when empty), at once
     * if there are any, else after up to {@code waitSeconds} (at most
     * {@value RegistryWatches#MAX_WATCH_SECONDS}) with none. Open, like lookups. A {@code reset}
     * answer asks the watcher to look its names up again and continue from the version returned.
     */
    @Override
    public WatchResponse watch(List<String> names, String epoch, Long sinceVersion, Integer waitSeconds) {
        return watches.poll(names, epoch, sinceVersion, waitSeconds);
    }

    @Override
    public List<Entry> lookup(String name) {
        return reads.lookup(name);
    }

    /** {@link #lookup} with each interface document once, named by digest; see {@link RegistryReads#lookupLean}. */
    @Override
    public LookupLeanResponse lookupLean(String name, List<String> knownSchemas) throws LookupLeanFaultException {
        return reads.lookupLean(name, knownSchemas);
    }

    @Override
    public List<Entry> listEntries() {
        return reads.list();
    }

    /** The watch concern, which the watch stream follows and {@link RegistryServer} opens and closes. */
    RegistryWatches watches() {
        return watches;
    }

    /** The read concern, which the watch stream's listener answers reads from. */
    RegistryReads reads() {
        return reads;
    }
}
