package io.switchboard.client;

import io.switchboard.registry.RegistryClient;
import io.switchboard.registry.ComponentEntry;
import io.switchboard.registry.RegistryWatch;
import io.switchboard.registry.RegistryEvent;
import io.switchboard.registry.RegistryException;
import io.switchboard.idl.runtime.ServiceDescriptor;
import io.switchboard.codec.dynamic.DynamicInterface;
import io.switchboard.metastub.CallListener;
import io.switchboard.metastub.AdaptivePolicy;
import io.switchboard.metastub.ClientInterceptor;
import io.switchboard.metastub.MetaStub;
import io.switchboard.metastub.ProtocolClients;
import io.switchboard.metastub.SelectionPolicy;
import io.switchboard.protocol.Channel;
import io.switchboard.protocol.ClientSettings;
import io.switchboard.protocol.ServerSettings;
import io.switchboard.protocol.Skeleton;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.UUID;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.function.Consumer;
import java.util.function.Function;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The client's entry point: looks components up in a registry and returns generated stubs over
 * meta-stubs, which pick the protocol of each call.
 *
 * <p>A stub from {@link #lookup} calls every replica bound under its name ({@link
 * ReplicatedChannel}: least calls in flight, round-robin when idle; a failed call moves to another
 * replica when that cannot run it twice) and follows the registry: one watch per {@code
 * Switchboard}, on every name, adds replicas that appear, drops those that go and re-points those
 * that moved, so a server that restarts on new ports is found again. Where the registry's policy
 * refuses this client a watch of every name, each name looked up is watched on its own. {@link
 * Builder#follow follow(false)} turns that off (the replicas stay those of the lookup).
 *
 * <p>Every meta-stub it builds shares one client per protocol ({@link ProtocolClients}): one gRPC
 * channel per server address, one SOAP connection pool. Closing a stub's channel leaves them to the
 * others; closing the {@code Switchboard} closes them, and every channel it made.
 *
 * <p>A client can also be called back: {@link io.switchboard.server.ExportedCallback#export} serves a small component of its
 * own, bound under a generated name that the client passes to a server, which reaches it through
 * {@link #callbackChannel} (see {@link ExportedCallback}).
 *
 * <pre>{@code
 * try (Switchboard sb = Switchboard.connect("http://127.0.0.1:8081/axis2/services/Registry")) {
 *     EchoStub echo = sb.lookup(EchoComponent.DESCRIPTOR, EchoComponent::stub);
 *     double[] back = echo.echoDoubles(new double[] {1, 2, 3});
 *     sb.watch("Echo", event -> System.out.println(event.kind() + " " + event.entry().endpoints()));
 * }
 * }</pre>
 */
public final class Switchboard implements AutoCloseable {
    private static final Logger LOG = LoggerFactory.getLogger(Switchboard.class);

    private final RegistryClient registry;
    private final List<String> protocols;
    private final SelectionPolicy policy;
    private final ClientSettings settings;
    private final List<CallListener> listeners;
    private final List<ClientInterceptor> interceptors;
    private final io.opentelemetry.api.OpenTelemetry tracing;
    private final boolean tracingSet;
    private final List<AutoCloseable> closeables = new CopyOnWriteArrayList<>();
    /** One client per protocol for every meta-stub this switchboard builds; closed last, when it closes. */
    private final ProtocolClients clients;
    private final boolean follow;
    /** The replica sets that follow the registry, fed by {@link #follower} (or {@link #followersByName}). */
    private final List<ReplicatedChannel> following = new CopyOnWriteArrayList<>();
    /** The watch of every name; null before the first lookup, and once the registry's policy refused it. */
    private RegistryWatch follower;
    /**
     * Once the registry's policy refused the watch of every name (a caller may be allowed to watch
     * some names only): a watch per name looked up since. Guarded by this.
     */
    private Map<String, RegistryWatch> followersByName;

    private final ServerSettings callbackSettings;
    private final Duration callbackLease;
    private final Duration backoff;
    private final Duration maxBackoff;

    private Switchboard(Builder b) {
        // the secret rides on writes only: callbacks bind through this client
        this.registry = RegistryClient.connect(RegistryClient.split(b.registryUrl), b.secret, b.settings);
        // a client with a key serves its callbacks over TLS with it, unless told otherwise
        this.callbackSettings = b.callbackSettings.tls() == null && b.settings.tls() != null && b.settings.tls().hasKey()
                ? b.callbackSettings.withTls(b.settings.tls()) : b.callbackSettings;
        this.callbackLease = b.callbackLease;
        this.backoff = b.backoff;
        this.maxBackoff = b.maxBackoff;
        this.follow = b.follow;
        this.protocols = b.protocols;
        this.policy = b.policy;
        this.settings = b.settings;
        this.clients = new ProtocolClients(b.settings);
        this.listeners = List.copyOf(b.listeners);
        this.interceptors = List.copyOf(b.interceptors);
        this.tracing = b.tracing;
        this.tracingSet = b.tracingSet;
    }

    public static Switchboard connect(String registryUrl) {
        return builder(registryUrl).connect();
    }

    public static Builder builder(String registryUrl) {
        return new Builder(registryUrl);
    }

    public RegistryClient registry() {
        return registry;
    }

    /** The channels following the registry now; for tests. */
    int followed() {
        return following.size();
    }

    /** A stub for the component bound under its own name. */
    public <T> T lookup(ServiceDescriptor descriptor, Function<Channel, T> stubFactory) {
        return lookup(descriptor.name(), descriptor, stubFactory);
    }

    /** A stub for the component bound under {@code name}: over all its replicas, following the registry. */
    public <T> T lookup(String name, ServiceDescriptor descriptor, Function<Channel, T> stubFactory) {
        return stubFactory.apply(replicas(name, descriptor));
    }

    /**
     * A stub for the component bound under {@code name} that needs no generated code: the
     * interface schema comes from the registry entry, read by the secure {@link
     * io.switchboard.idl.SchemaReader} (no DTDs, no imports, its size limit), and calls go over
     * the same replicas and meta-stubs as {@link #lookup}'s, with the same negotiation, failsafe
     * and call records.
     *
     * <pre>{@code
     * DynamicStub echo = sb.dynamic("Echo");
     * double[] back = (double[]) echo.call("echoDoubles", Map.of("values", new double[] {1, 2, 3}));
     * }</pre>
     *
     * @throws NotBoundException nothing is bound under {@code name}
     * @throws io.switchboard.idl.SchemaException the entry's schema is missing, oversized or not one Switchboard reads
     */
    public DynamicStub dynamic(String name) {
        List<ComponentEntry> entries = registry.lookup(name);
        if (entries.isEmpty()) {
            throw new NotBoundException(name + " is not bound in the registry at " + registry.url());
        }
        String schema = entries.get(0).interfaceSchema();
        if (schema == null || schema.isBlank()) {
            throw new io.switchboard.idl.SchemaException("the registry entry of " + name + " carries no interface schema");
        }
        DynamicInterface iface = DynamicInterface.fromSchema(schema);
        return new DynamicStub(iface, replicas(name, iface.descriptor()));
    }

    /**
     * The channel over every replica bound under {@code name}, following the registry unless the
     * builder said otherwise. Closed before this {@code Switchboard}, it stops following, and a
     * name no other channel follows is no longer watched; otherwise it closes with this.
     *
     * @throws NotBoundException nothing is bound under {@code name}
     */
    public ReplicatedChannel replicas(String name, ServiceDescriptor descriptor) {
        ReplicatedChannel channel = new ReplicatedChannel(name, List.of(), e -> metaStub(descriptor, e),
                ReplicatedChannel.Choice.LEAST_LOADED, settings.connectTimeout());
        if (follow) {
            // follow before looking up, and look up only once the watch knows what is bound: every
            // change after that reaches the channel as an event (one older than the lookup may come
            // late, and the ones after it set the state right again), including the departure of
            // an instance the lookup found
            following.add(channel);
            try {
                follow(name);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
        }
        List<ComponentEntry> entries;
        try {
            entries = registry.lookup(name);
        } catch (RuntimeException e) {
            unfollow(channel);   // a failed lookup leaves nothing behind to follow
            throw e;
        }
        if (entries.isEmpty()) {
            unfollow(channel);
            throw new NotBoundException(name + " is not bound in the registry at " + registry.url());
        }
        entries.forEach(channel::upsert);
        closeables.add(channel);
        // closed by its owner before this Switchboard: nothing of it stays behind, and a name no
        // other replica set follows is no longer watched
        channel.whenClosed(() -> {
            closeables.remove(channel);
            if (follow) {
                unfollow(channel);
            }
        });
        return channel;
    }

    /**
     * The meta-stub for the first instance bound under {@code name}, for per-operation settings
     * and listeners. It neither follows the registry nor moves to other replicas: {@link #lookup}
     * does.
     */
    public MetaStub channel(String name, ServiceDescriptor descriptor) {
        List<ComponentEntry> entries = registry.lookup(name);
        if (entries.isEmpty()) {
            throw new NotBoundException(name + " is not bound in the registry at " + registry.url());
        }
        MetaStub channel = metaStub(descriptor, entries.get(0));
        closeables.add(channel);
        return channel;
    }

    /**
     * Where this client's callbacks listen and how long their lease is ({@link Builder#callbacks});
     * {@code ExportedCallback.export} in the server runtime reads them.
     */
    public ServerSettings callbackSettings() {
        return callbackSettings;
    }

    public Duration callbackLease() {
        return callbackLease;
    }

    /** Closes {@code resource} when this {@code Switchboard} closes (callbacks use it). */
    public <C extends AutoCloseable> C closeWith(C resource) {
        closeables.add(Objects.requireNonNull(resource));
        return resource;
    }

    /** Forgets a resource given to {@link #closeWith} that was closed already. */
    public void forget(AutoCloseable resource) {
        closeables.remove(resource);
    }

    /**
     * The meta-stub of a callback a caller passed by its registry name (see {@link
     * io.switchboard.server.ExportedCallback#export}): the first instance bound under {@code name}, found in the registry like
     * any component. Unlike {@link #channel} it is not kept by this {@code Switchboard}: the
     * caller closes it when the call that uses it ends, so a server that takes many callbacks
     * holds none of them afterwards.
     *
     * <pre>{@code
     * try (MetaStub channel = sb.callbackChannel(progressName, ProgressComponent.DESCRIPTOR)) {
     *     ProgressComponent.stub(channel).report(done, total, time, state);
     * }
     * }</pre>
     *
     * @throws NotBoundException nothing is bound under {@code name} (the caller closed it, say)
     */
    public MetaStub callbackChannel(String name, ServiceDescriptor descriptor) {
        List<ComponentEntry> entries = registry.lookup(name);
        if (entries.isEmpty()) {
            throw new NotBoundException("callback " + name + " is not bound in the registry at " + registry.url());
        }
        return metaStub(descriptor, entries.get(0));
    }

    private MetaStub metaStub(ServiceDescriptor descriptor, ComponentEntry entry) {
        MetaStub.Builder b = MetaStub.builder(descriptor).endpoints(entry.endpoints()).policy(policy).clients(clients)
                .serverRecognisesCallIds(entry.has(ComponentEntry.CALL_IDS)).backoff(backoff, maxBackoff);
        if (protocols != null) {
            b.protocols(protocols);
        }
        listeners.forEach(b::listener);
        interceptors.forEach(b::interceptor);
        if (tracingSet) {
            b.tracing(tracing);
        }
        return b.build();
    }

    /**
     * Tells {@code listener} about the instances of {@code name} (every name when null): first
     * each one bound now as {@link RegistryEvent.Kind#APPEAR}, then the changes, one at a time.
     * The changes come on the registry's watch stream, shared with every other watch of the JVM
     * (no connection or thread of its own; the listener runs on a shared thread, so it should not
     * block for long), or from a registry without one by long polls on a daemon thread (see
     * {@link RegistryWatch}). Close the watch to stop it; closing this {@code Switchboard} stops it too.
     *
     * <p>The contract, per instance: events come in the order of the changes, never an older state
     * after a newer one, and the last event reports the instance's current state. Changes made
     * through the watched registry server are each reported; changes made through another server
     * on a ZooKeeper store may be folded when they follow each other faster than the watched
     * server reads them (an {@code APPEAR} may carry a rebound entry, a bind quickly undone may
     * not be reported at all). A watch keeps a view current; it is not a log of every write.
     */
    public RegistryWatch watch(String name, Consumer<RegistryEvent> listener) {
        RegistryWatch w = RegistryWatch.start(registry, name == null ? List.of() : List.of(name), listener);
        closeables.add(w);
        return w;
    }

    /**
     * Waits until a watch that reports {@code name}'s changes knows what is bound: the watch of
     * every name, shared by all the replica sets, or, once the registry's policy refused that one,
     * a watch of {@code name} alone, which a policy may allow where it hides the other names.
     */
    private void follow(String name) throws InterruptedException {
        RegistryWatch every = everyName();
        if (every != null) {
            every.awaitSynced(settings.connectTimeout());
            if (!every.denied()) {
                return;
            }
            followByName(every);
        }
        byName(name).awaitSynced(settings.connectTimeout());
    }

    /**
     * The watch of every name, started at the first lookup; null once the policy refused it, at
     * its start or later (a policy edited while it runs).
     */
    private synchronized RegistryWatch everyName() {
        if (follower == null && followersByName == null) {
            follower = RegistryWatch.start(registry, List.of(), this::tellFollowing, this::followByName);
            closeables.add(follower);
        }
        return follower;
    }

    /**
     * Stops the refused watch of every name (it would go on asking, and a registry's log with it)
     * and follows each name looked up so far by a watch of its own; at most once.
     */
    private synchronized void followByName(RegistryWatch refused) {
        if (follower != refused) {
            return;   // another lookup got here first
        }
        follower = null;
        followersByName = new HashMap<>();
        closeables.remove(refused);
        refused.close();
        LOG.info("the registry at {} does not let this client watch every name: following each name looked up"
                + " by its own watch", registry.url());
        for (ReplicatedChannel c : following) {
            byName(c.name());
        }
    }

    /** A watch's event, to every replica set following the registry (each takes its own name's). */
    private void tellFollowing(RegistryEvent event) {
        following.forEach(c -> c.apply(event));
    }

    /** Stops following {@code channel}, and its name's own watch when no other replica set follows that name. */
    private synchronized void unfollow(ReplicatedChannel channel) {
        following.remove(channel);
        if (followersByName == null || following.stream().anyMatch(c -> c.name().equals(channel.name()))) {
            return;
        }
        RegistryWatch w = followersByName.remove(channel.name());
        if (w != null) {
            closeables.remove(w);
            w.close();
        }
    }

    private synchronized RegistryWatch byName(String name) {
        return followersByName.computeIfAbsent(name, n -> {
            RegistryWatch w = RegistryWatch.start(registry, List.of(n), this::tellFollowing);
            closeables.add(w);
            return w;
        });
    }

    @Override
    public void close() {
        for (AutoCloseable c : closeables) {
            try {
                c.close();
            } catch (Exception e) {
                // closing anyway
            }
        }
        clients.close();   // after the stubs: calls still under way end on closed clients
        registry.close();
    }

    /** Nothing is bound under the name asked for. */
    public static final class NotBoundException extends RegistryException {
        public NotBoundException(String message) {
            super("not-bound", message);
        }
    }

    /** Configures a {@link Switchboard}. Defaults: every protocol on the class path, the adaptive policy. */
    public static final class Builder {
        private final String registryUrl;
        private List<String> protocols;
        private SelectionPolicy policy = new AdaptivePolicy();
        private ClientSettings settings = ClientSettings.defaults();
        private final List<CallListener> listeners = new ArrayList<>();
        private final List<ClientInterceptor> interceptors = new ArrayList<>();
        private io.opentelemetry.api.OpenTelemetry tracing;
        private boolean tracingSet;
        private boolean follow = true;
        private String secret;
        private ServerSettings callbackSettings = ServerSettings.defaults();
        private Duration callbackLease = Duration.ofSeconds(10);
        private Duration backoff = MetaStub.Builder.DEFAULT_BACKOFF;
        private Duration maxBackoff = MetaStub.Builder.DEFAULT_MAX_BACKOFF;

        /** {@code registryUrl}: one registry's SOAP endpoint, or several sharing a store, separated by commas. */
        private Builder(String registryUrl) {
            this.registryUrl = Objects.requireNonNull(registryUrl, "registryUrl");
        }

        /** The client's protocols, most preferred first. */
        public Builder protocols(String... names) {
            protocols = List.of(names);
            return this;
        }

        public Builder policy(SelectionPolicy stubPolicy) {
            policy = Objects.requireNonNull(stubPolicy);
            return this;
        }

        /**
         * Timeouts, limits and TLS ({@link ClientSettings#withTls}): whom to trust on {@code https://}
         * and {@code grpcs://} endpoints, the registry's included, and the key to present to servers
         * that require client certificates; callbacks are then served over TLS with that key.
         */
        public Builder settings(ClientSettings clientSettings) {
            settings = Objects.requireNonNull(clientSettings);
            return this;
        }

        /**
         * TLS on every connection: trusts what {@code tls} trusts and presents its key (shorthand for
         * {@code settings(settings.withTls(tls))}); null: the JVM's trust, no key.
         */
        public Builder tls(io.switchboard.protocol.TlsSettings tls) {
            settings = settings.withTls(tls);
            return this;
        }

        /**
         * The name this client's calls go by in this process (shorthand for {@code
         * settings(settings.withCallerName(name))}): a component it calls over the local protocol
         * sees it as its caller's principal. A component given its host's
         * {@code ComponentContext.clientSettings()} goes by its own name already.
         *
         * <pre>{@code
         * Switchboard sb = Switchboard.builder(url).name("nightly-report").connect();
         * }</pre>
         */
        public Builder name(String callerName) {
            settings = settings.withCallerName(callerName);
            return this;
        }

        public Builder listener(CallListener listener) {
            listeners.add(Objects.requireNonNull(listener));
            return this;
        }

        /**
         * Adds a step to every attempt of every call through the meta-stubs this client makes
         * ({@link MetaStub.Builder#interceptor}): after the protocol is chosen, before the call is
         * recorded and sent. One instance serves every stub.
         */
        public Builder interceptor(ClientInterceptor interceptor) {
            interceptors.add(Objects.requireNonNull(interceptor));
            return this;
        }

        /**
         * Traces the calls of every meta-stub this switchboard makes with this OpenTelemetry
         * ({@link io.switchboard.metastub.MetaStub.Builder#tracing}); null turns tracing off. By
         * default the global one, when an SDK is registered there.
         */
        public Builder tracing(io.opentelemetry.api.OpenTelemetry openTelemetry) {
            this.tracing = openTelemetry;
            this.tracingSet = true;
            return this;
        }

        /**
         * Whether stubs follow the registry (default true): a watch keeps their replicas current.
         * False: the replicas are those found at lookup, and no watch thread runs.
         */
        public Builder follow(boolean followRegistry) {
            follow = followRegistry;
            return this;
        }

        /** The registry's shared secret, needed to {@link io.switchboard.server.ExportedCallback#export export callbacks} when it has one. */
        public Builder secret(String sharedSecret) {
            secret = sharedSecret;
            return this;
        }

        /**
         * Where callbacks listen (default: loopback, ephemeral ports; a server on another host
         * needs a bind address it can reach, and maybe an advertised host) and their lease
         * (default 10 s: a dead client's callbacks leave the registry soon).
         */
        public Builder callbacks(ServerSettings settings, Duration lease) {
            callbackSettings = Objects.requireNonNull(settings);
            callbackLease = Objects.requireNonNull(lease);
            return this;
        }

        /**
         * How long a protocol that failed is left out of this client's calls (the failsafe's SOAP
         * never is): {@code initial} after a failure, doubling with each failure in a row, at most
         * {@code max}. Default 2 s and 1 min: a listener back soon is used again soon.
         */
        public Builder backoff(Duration initial, Duration max) {
            if (initial.isNegative() || max.compareTo(initial) < 0) {
                throw new IllegalArgumentException("backoff: need 0 <= initial <= max, got " + initial + " and " + max);
            }
            backoff = initial;
            maxBackoff = max;
            return this;
        }

        public Switchboard connect() {
            return new Switchboard(this);
        }
    }
}
