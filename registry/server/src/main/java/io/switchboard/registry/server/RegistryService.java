package io.switchboard.registry.server;

import io.switchboard.protocol.spi.Protocols;
import io.switchboard.registry.RegistryEvent;
import io.switchboard.registry.RegistryClient;
import io.switchboard.registry.store.RegistryStore;
import io.switchboard.registry.ComponentEntry;
import io.switchboard.registry.Entries;
import io.switchboard.idl.SchemaException;
import io.switchboard.idl.SchemaReader;
import io.switchboard.protocol.Endpoint;
import io.switchboard.registry.wire.BindFaultException;
import io.switchboard.registry.wire.Entry;
import io.switchboard.registry.wire.Event;
import io.switchboard.registry.wire.WatchResponse;
import io.switchboard.registry.wire.RebindFaultException;
import io.switchboard.registry.wire.Registry;
import io.switchboard.registry.wire.RenewFaultException;
import io.switchboard.registry.wire.CallStats;
import io.switchboard.registry.wire.RenewWithStatsFaultException;
import io.switchboard.registry.CallSummary;
import java.time.Instant;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import io.switchboard.registry.wire.UnbindFaultException;
import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.time.Clock;
import java.time.Duration;
import java.util.Set;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.regex.Pattern;
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
 * <pre>{@code
 * RegistryService registry = new RegistryService(FileRegistryStore.open(path), secret, Clock.systemUTC());
 * }</pre>
 */
public final class RegistryService implements Registry {
    private static final Logger LOG = LoggerFactory.getLogger(RegistryService.class);
    static final Pattern NAME = Pattern.compile("[A-Za-z_][A-Za-z0-9_.:-]{0,255}");
    static final Pattern INSTANCE = Pattern.compile("[A-Za-z0-9_.:-]{1,128}");
    static final Pattern PROTOCOL = Pattern.compile("[a-z][a-z0-9-]{0,31}");
    static final int MAX_ENDPOINTS = 16;
    static final int MAX_PROTO_CHARS = 1 << 20;
    /** The longest lease granted: a day. */
    static final int MAX_LEASE_SECONDS = 86_400;
    /** Changes kept for watchers that are behind; one further back is told to reset. */
    static final int WATCH_BUFFER = 4096;
    static final int MAX_WATCH_SECONDS = RegistryClient.MAX_WATCH_SECONDS;
    /** Watches that may wait at once: each holds one of the SOAP server's 64 threads. */
    static final int MAX_WAITING_WATCHES = 32;
    static final int MAX_WATCHED_NAMES = 256;

    private final RegistryStore store;
    private final byte[] secret;
    private final Clock clock;
    /** Guards every write: a sweep never removes an entry between a renew's check and its answer. */
    private final Leases leases;
    private final WatchHub watches;
    /** The call figures each leased instance last reported with its renewal; only for leases held here. */
    private final Map<Leases.Key, Report> reports = new ConcurrentHashMap<>();
    /** Reports received so far; waited on by {@link #awaitReports}. */
    private long reportCount;
    /** False when the store reports changes itself (ZooKeeper: also other servers' writes). */
    private final boolean reportOwnWrites;
    private volatile String stream;

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
        this.secret = secret == null ? null : secret.getBytes(StandardCharsets.UTF_8);
        this.clock = clock;
        this.leases = new Leases(clock);
        if (secret == null && !policyDecidesWrites) {
            LOG.warn("registry accepts writes without a credential; set a shared secret or a policy to secure it");
        }
        this.watches = new WatchHub(store.list(), WATCH_BUFFER, MAX_WAITING_WATCHES);
        this.reportOwnWrites = !store.reportChanges(new RegistryStore.ChangeSink() {
            @Override
            public void bound(ComponentEntry entry) {
                watches.bound(entry);
            }

            @Override
            public void gone(String name, String instanceId) {
                watches.gone(name, instanceId);
            }
        });
        if (!store.shared()) {
            synchronized (leases) {
                store.list().stream().filter(ComponentEntry::leased).forEach(leases::grant);
            }
            if (leases.size() > 0) {
                LOG.info("{} leased entries restored from the store; each has one lease to be renewed", leases.size());
            }
        }
    }

    public RegistryStore store() {
        return store;
    }

    @Override
    public void bind(Entry entry, String credential) throws BindFaultException {
        String problem = authorize(credential);
        if (problem != null) {
            throw RegistryFault.BIND.of(RegistryFault.UNAUTHORIZED, problem);
        }
        ComponentEntry e;
        try {
            e = validate(entry);
        } catch (IllegalArgumentException ex) {
            throw RegistryFault.BIND.of(RegistryFault.INVALID, ex.getMessage());
        }
        try {
            synchronized (leases) {
                store.bind(e);
                leases.grant(e);
                ownWrite(e);
            }
        } catch (RegistryStore.AlreadyBoundException ex) {
            throw RegistryFault.BIND.of(RegistryFault.ALREADY_BOUND, ex.getMessage());
        } catch (IllegalArgumentException ex) {
            throw RegistryFault.BIND.of(RegistryFault.INVALID, ex.getMessage());
        } catch (RegistryStore.StoreException ex) {
            throw RegistryFault.BIND.of(RegistryFault.UNAVAILABLE, ex.getMessage());
        }
        LOG.info("bound {} ({}) at {}", e.name(), e.instanceId(), e.endpoints());
    }

    @Override
    public void rebind(Entry entry, String credential) throws RebindFaultException {
        String problem = authorize(credential);
        if (problem != null) {
            throw RegistryFault.REBIND.of(RegistryFault.UNAUTHORIZED, problem);
        }
        ComponentEntry e;
        try {
            e = validate(entry);
        } catch (IllegalArgumentException ex) {
            throw RegistryFault.REBIND.of(RegistryFault.INVALID, ex.getMessage());
        }
        try {
            synchronized (leases) {
                store.rebind(e);
                leases.grant(e);
                ownWrite(e);
            }
        } catch (IllegalArgumentException ex) {
            throw RegistryFault.REBIND.of(RegistryFault.INVALID, ex.getMessage());
        } catch (RegistryStore.StoreException ex) {
            throw RegistryFault.REBIND.of(RegistryFault.UNAVAILABLE, ex.getMessage());
        }
        LOG.info("rebound {} ({}) at {}", e.name(), e.instanceId(), e.endpoints());
    }

    @Override
    public int unbind(String name, String instanceId, String credential) throws UnbindFaultException {
        String problem = authorize(credential);
        if (problem != null) {
            throw RegistryFault.UNBIND.of(RegistryFault.UNAUTHORIZED, problem);
        }
        if (name == null) {
            throw RegistryFault.UNBIND.of(RegistryFault.INVALID, "the name is missing");
        }
        int removed;
        try {
            synchronized (leases) {
                removed = store.unbind(name, instanceId);
                leases.end(name, instanceId);
                reports.keySet().removeIf(k -> !leases.holds(k));
                ownRemoval(name, instanceId);
            }
        } catch (RegistryStore.StoreException ex) {
            throw RegistryFault.UNBIND.of(RegistryFault.UNAVAILABLE, ex.getMessage());
        }
        if (removed > 0) {
            LOG.info("unbound {} ({}): {} instance(s)", name, instanceId == null ? "all" : instanceId, removed);
        }
        return removed;
    }

    /**
     * Extends the lease of one instance. False when the registry does not hold the instance: its
     * lease ran out, or the registry lost it; the server then binds it again.
     */
    @Override
    public boolean renew(String name, String instanceId, String credential) throws RenewFaultException {
        String problem = authorize(credential);
        if (problem != null) {
            throw RegistryFault.RENEW.of(RegistryFault.UNAUTHORIZED, problem);
        }
        if (name == null || instanceId == null) {
            throw RegistryFault.RENEW.of(RegistryFault.INVALID, "renew needs a name and an instance id");
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
                    LOG.info("took {} the lease of {} ({}) from another registry server", granted ? "back" : "over",
                            name, instanceId);
                } else {
                    LOG.debug("renewed {} ({})", name, instanceId);
                }
                return true;
            }
        } catch (RegistryStore.StoreException ex) {
            throw RegistryFault.RENEW.of(RegistryFault.UNAVAILABLE, ex.getMessage());
        }
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
        String problem = authorize(credential);
        if (problem != null) {
            throw RegistryFault.RENEW_WITH_STATS.of(RegistryFault.UNAUTHORIZED, problem);
        }
        CallSummary summary;
        try {
            summary = CallSummary.fromWire(stats);
        } catch (IllegalArgumentException e) {
            throw RegistryFault.RENEW_WITH_STATS.of(RegistryFault.INVALID, "the call figures are not valid: " + e.getMessage());
        }
        boolean bound;
        try {
            bound = renew(name, instanceId, credential);
        } catch (RenewFaultException e) {
            throw RegistryFault.RENEW_WITH_STATS.of(e.getFaultInfo().getCode(), e.getFaultInfo().getReason());
        }
        if (bound) {
            Leases.Key k = new Leases.Key(name, instanceId);
            synchronized (leases) {
                if (leases.holds(k)) {
                    reports.put(k, new Report(summary, clock.instant()));
                }
            }
            synchronized (reports) {
                reportCount++;
                reports.notifyAll();
            }
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
        Map<String, Map<String, Live>> out = new java.util.TreeMap<>();
        synchronized (leases) {
            leases.view().forEach((k, v) -> out.computeIfAbsent(k.name(), n -> new java.util.TreeMap<>())
                    .put(k.instanceId(), new Live(v.seconds(), v.renewedAt(), v.deadline(), reports.get(k))));
        }
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
        long deadline = System.nanoTime() + timeout.toNanos();
        synchronized (reports) {
            while (reportCount < seen + more) {
                long left = deadline - System.nanoTime();
                if (left <= 0) {
                    return false;
                }
                java.util.concurrent.TimeUnit.NANOSECONDS.timedWait(reports, left);
            }
            return true;
        }
    }

    /** How many reports have arrived so far (see {@link #awaitReports}). */
    public long reportCount() {
        synchronized (reports) {
            return reportCount;
        }
    }

    /**
     * Drops every entry whose lease ran out; returns how many. A removal that fails (store
     * unreachable) is tried again at the next sweep.
     */
    public int sweep() {
        int dropped = 0;
        synchronized (leases) {
            for (Leases.Key k : leases.expired()) {
                try {
                    boolean removed = store.expire(k.name(), k.instanceId());
                    leases.end(k.name(), k.instanceId());
                    if (removed) {
                        dropped++;
                        ownRemoval(k.name(), k.instanceId());
                        LOG.info("lease of {} ({}) ran out; entry dropped", k.name(), k.instanceId());
                    } else {
                        LOG.info("lease of {} ({}) ran out here; the entry is another registry server's now, "
                                + "or gone", k.name(), k.instanceId());
                    }
                } catch (RuntimeException e) {
                    LOG.warn("could not drop {} ({}) whose lease ran out; will try again: {}", k.name(),
                            k.instanceId(), e.getMessage());
                }
            }
            reports.keySet().removeIf(k -> !leases.holds(k));
        }
        return dropped;
    }

    private void ownWrite(ComponentEntry e) {
        if (reportOwnWrites) {
            watches.bound(e);
        }
    }

    private void ownRemoval(String name, String instanceId) {
        if (reportOwnWrites) {
            watches.gone(name, instanceId);
        }
    }

    /**
     * Long poll: the changes after {@code sinceVersion} to {@code names} (all when empty), at once
     * if there are any, else after up to {@code waitSeconds} (at most {@value #MAX_WATCH_SECONDS})
     * with none. Open, like lookups. A {@code reset} answer asks the watcher to look its names up
     * again and continue from the version returned.
     */
    @Override
    public WatchResponse watch(List<String> names, String epoch, Long sinceVersion, Integer waitSeconds) {
        Set<String> wanted = WatchHub.names(names);
        if (wanted.size() > MAX_WATCHED_NAMES) {
            throw new IllegalArgumentException("a watch names at most " + MAX_WATCHED_NAMES + " components");
        }
        int wait = waitSeconds == null ? 0 : Math.max(0, Math.min(MAX_WATCH_SECONDS, waitSeconds));
        WatchResponse r = toWire(watches.poll(wanted, epoch, sinceVersion, Duration.ofSeconds(wait)));
        r.setStream(stream);
        return r;
    }

    /** A poll's answer in the registry's wire form, as the SOAP {@code watch} and the watch stream send it. */
    static WatchResponse toWire(WatchHub.Poll poll) {
        WatchResponse r = new WatchResponse();
        r.setEpoch(poll.epoch());
        r.setVersion(poll.version());
        r.setReset(poll.reset());
        List<Event> events = new ArrayList<>();
        for (WatchHub.Change c : poll.changes()) {
            Event w = new Event();
            w.setVersion(c.version());
            w.setKind(c.event().kind().wire());
            w.setName(c.event().name());
            w.setInstanceId(c.event().instanceId());
            if (c.event().kind() != RegistryEvent.Kind.GO) {
                w.setEntry(Entries.toWire(c.event().entry()));
            }
            events.add(w);
        }
        r.setEvents(events);
        return r;
    }

    /** The hub every watch reads, SOAP long polls and streams alike. */
    WatchHub watches() {
        return watches;
    }

    /** Where this server streams changes ({@code grpc://HOST:PORT}), told to SOAP watchers; null: nowhere. */
    void streamAt(String address) {
        stream = address;
    }

    /** Answers every waiting watch now; the registry is stopping. */
    void closeWatches() {
        watches.close();
    }

    @Override
    public List<Entry> lookup(String name) {
        List<Entry> out = new ArrayList<>();
        for (ComponentEntry e : store.lookup(name)) {
            out.add(Entries.toWire(e));
        }
        return out;
    }

    @Override
    public List<Entry> listEntries() {
        List<Entry> out = new ArrayList<>();
        for (ComponentEntry e : store.list()) {
            out.add(Entries.toWire(e.withoutSchema()));
        }
        return out;
    }

    /** Null when the credential is acceptable, else why not. Compared in constant time. */
    private String authorize(String credential) {
        if (secret == null) {
            return null;
        }
        if (credential == null) {
            return "this registry needs a credential for writes";
        }
        if (!MessageDigest.isEqual(secret, credential.getBytes(StandardCharsets.UTF_8))) {
            return "the credential is not valid";
        }
        return null;
    }

    private ComponentEntry validate(Entry entry) {
        if (entry == null) {
            throw new IllegalArgumentException("the entry is missing");
        }
        ComponentEntry e = Entries.fromWire(entry);   // refuses missing members by name
        if (!NAME.matcher(e.name()).matches()) {
            throw new IllegalArgumentException("name '" + abbreviate(e.name()) + "' is not a valid component name");
        }
        if (!INSTANCE.matcher(e.instanceId()).matches() || e.instanceId().equals(".") || e.instanceId().equals("..")) {
            throw new IllegalArgumentException("instance id '" + abbreviate(e.instanceId()) + "' is not valid");
        }
        if (e.endpoints().isEmpty() || e.endpoints().size() > MAX_ENDPOINTS) {
            throw new IllegalArgumentException("an entry needs 1 to " + MAX_ENDPOINTS + " endpoints");
        }
        for (Endpoint ep : e.endpoints()) {
            if (!PROTOCOL.matcher(ep.protocol()).matches()) {
                throw new IllegalArgumentException("protocol name '" + abbreviate(ep.protocol()) + "' is not valid");
            }
            String wrong = Protocols.checkAddress(ep.protocol(), ep.address());
            if (wrong != null) {
                throw new IllegalArgumentException("endpoint " + abbreviate(ep.address()) + " " + wrong);
            }
        }
        String failsafe = Protocols.failsafe().name();
        if (e.endpoint(failsafe).isEmpty()) {
            throw new IllegalArgumentException("an entry needs a " + failsafe + " endpoint: the protocol every party speaks");
        }
        if (e.interfaceSchema() != null) {
            try {
                SchemaReader.read(e.interfaceSchema());
            } catch (SchemaException ex) {
                throw new IllegalArgumentException("the interface schema cannot be read: " + ex.getMessage());
            }
        }
        if (e.interfaceProto() != null && e.interfaceProto().length() > MAX_PROTO_CHARS) {
            throw new IllegalArgumentException("the .proto is longer than " + MAX_PROTO_CHARS + " characters");
        }
        if (e.leaseSeconds() > MAX_LEASE_SECONDS) {
            throw new IllegalArgumentException("a lease is at most " + MAX_LEASE_SECONDS + " seconds");
        }
        return e.withBoundAt(clock.instant());
    }

    private static String abbreviate(String s) {
        return s.length() <= 80 ? s : s.substring(0, 77) + "...";
    }
}
