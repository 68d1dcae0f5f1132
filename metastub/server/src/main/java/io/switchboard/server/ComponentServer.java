package io.switchboard.server;

import io.switchboard.protocol.DaemonThreads;
import io.switchboard.registry.RegistryClient;
import io.switchboard.registry.ComponentEntry;
import io.switchboard.idl.runtime.ServiceDescriptor;
import io.switchboard.protocol.ServerInterceptor;
import io.switchboard.protocol.ServerInterceptorChain;
import io.switchboard.protocol.spi.DeduplicatingInterceptor;
import io.switchboard.protocol.spi.PhaseMarkInterceptor;
import io.switchboard.protocol.spi.PhaseMarks;
import io.switchboard.protocol.Endpoint;
import io.switchboard.protocol.spi.ProtocolServer;
import io.switchboard.protocol.spi.Protocols;
import io.switchboard.protocol.ClientSettings;
import io.switchboard.protocol.ServerSettings;
import io.switchboard.protocol.Skeleton;
import io.switchboard.protocol.TransportException;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import io.switchboard.protocol.spi.WebHandler;
import java.io.IOException;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.UUID;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Serves components on several protocols at once and binds each in a registry under a lease that
 * a heartbeat renews (at a third of the lease, on a daemon thread); closing it drains (see
 * {@link #close}): it unbinds them, answers for a quiet period, refuses new calls as draining and
 * waits for those under way, then stops the listeners. If the process dies without closing, the registry drops its entries
 * when their lease runs out. If the registry answers a renew with "not bound" (it restarted
 * without the entry, or the lease lapsed while the registry was unreachable), the heartbeat binds
 * the entry again.
 *
 * <p>With the local protocol ({@code protocols/local}) on the class path, or {@code "local"} among
 * {@link Builder#protocols}, the entry also lists a {@code local://JVM-ID/...} endpoint: a
 * meta-stub in this JVM calls the component over it, in process; one in another JVM ignores it.
 *
 * <p>With TLS in its settings ({@link ServerSettings#tls}) every listener speaks TLS (SOAP
 * {@code https://}, gRPC {@code grpcs://}) and, with a trust store, requires trusted client
 * certificates; the server reaches its registry with the same key and trust.
 *
 * <p>Every call an exported component serves goes down one chain of {@link ServerInterceptor}s,
 * linked once per component and protocol when it is exported (built in one place,
 * {@code ComponentServer.chain}), one
 * concern each:
 * <ol>
 * <li>{@link TracingServerInterceptor}: an OpenTelemetry SERVER span per call, child of the
 * caller's trace context, when tracing is on ({@link Builder#tracing}); a refusal goes on below;
 * <li>{@link io.switchboard.server.authz.AuthorizationInterceptor}, with a policy
 * ({@link Builder#authorization}): a call the policy denies goes no further (counted in
 * {@link ServerCallStats#denials()}), not even to the de-duplicator;
 * <li>{@code CallStatsInterceptor}: the call's outcome and time in {@link #callStats()} (the
 * console, {@code /metrics}, the lease reports), refusals and repeats included;
 * <li>{@link DeduplicatingInterceptor}: each call id runs once, whichever protocol it arrives on; a
 * repeat gets the first outcome without going further (one instance shared by the protocols);
 * <li>{@code DrainingInterceptor}: counts the calls under way and, once {@link #close} has begun to
 * drain, refuses new ones as draining (a repeat of a call id run here still gets its outcome above);
 * <li>the interceptors added with {@link Builder#interceptor}, in that order: once per call id,
 * inside the span and the figures;
 * <li>{@link PhaseMarkInterceptor}: the benchmark's {@code INVOKE_START}/{@code INVOKE_END} marks,
 * only in a JVM started with {@code -Dswitchboard.phases=true};
 * <li>the component's skeleton.
 * </ol>
 *
 * <pre>{@code
 * try (ComponentServer server = ComponentServer.builder()
 *         .registry("http://127.0.0.1:8081/axis2/services/Registry", secret)
 *         .build()) {
 *     ComponentEntry entry = server.export(EchoComponent.skeleton(new EchoService()));
 *     ...
 * }
 * }</pre>
 */
public final class ComponentServer implements AutoCloseable {
    private static final Logger LOG = LoggerFactory.getLogger(ComponentServer.class);
    /**
     * Bytes of calls remembered per component for de-duplication (outcomes at their encoded size),
     * one identity's share of them, and for how long.
     */
    static final long RECENT_CALL_BYTES = 64L << 20;
    static final long RECENT_CALL_BYTES_PER_IDENTITY = 16L << 20;
    static final java.time.Duration RECENT_CALL_RETENTION = java.time.Duration.ofMinutes(5);
    /** The lease a server asks for unless told otherwise. */
    public static final Duration DEFAULT_LEASE = Duration.ofSeconds(30);
    /** How long a closing server answers after unbinding its entries, unless told otherwise ({@link Builder#drain}). */
    public static final Duration DEFAULT_DRAIN_QUIET_PERIOD = Duration.ofSeconds(1);
    /** How long a closing server waits for the calls under way, unless told otherwise ({@link Builder#drain}). */
    public static final Duration DEFAULT_DRAIN_TIMEOUT = Duration.ofSeconds(30);

    private final Map<String, ProtocolServer> servers = new LinkedHashMap<>();
    private final RegistryClient registry;
    /** Whether {@link #registry} is this server's own (closed with it) or a caller's. */
    private final boolean ownsRegistry;
    private final List<ComponentEntry> bound = new CopyOnWriteArrayList<>();
    /** The ports of listeners {@link #stopProtocol stopped}, held until this server closes. */
    private final List<Socket> heldPorts = new ArrayList<>();
    private final int leaseSeconds;
    private final ScheduledExecutorService heartbeat;
    /** How long a bind waits for each of several registries. */
    private static final int BIND_ANSWER_SECONDS = 5;
    /** A renew waits one heartbeat period per registry (1 s at least), so that the next registry is asked within the lease. */
    private final Duration renewTimeout;
    /** What each component served, per operation and protocol; reported with every renewal. */
    private final ServerCallStats stats;
    private boolean closed;
    /** Null when tracing is off (no OpenTelemetry SDK registered, or turned off on the builder). */
    private final TracingServerInterceptor tracing;
    /** The builder's interceptors, in every component's chain after the de-duplicator. */
    private final List<ServerInterceptor> interceptors;
    /** Counts the calls under way and refuses new ones once the server drains. */
    private final DrainingInterceptor draining = new DrainingInterceptor();
    private final Duration drainQuietPeriod;
    private final Duration drainTimeout;
    /** Null without a policy: every caller may call everything. */
    private final io.switchboard.server.authz.AuthorizationInterceptor authorization;
    /** A policy file this server watches and closes; null when it has none or the caller owns it. */
    private final io.switchboard.server.authz.PolicyFile ownedPolicyFile;

    private ComponentServer(Builder b) {
        // first: an invalid policy file refuses the server before any listener opens
        this.ownedPolicyFile = b.policyFile == null ? null
                : io.switchboard.server.authz.PolicyFile.watch(b.policyFile, b.policyInterval);
        io.opentelemetry.api.OpenTelemetry otel = b.tracingSet ? b.tracing
                : io.opentelemetry.api.GlobalOpenTelemetry.get();
        this.tracing = io.switchboard.metastub.TracingInterceptor.isNoop(otel) ? null : new TracingServerInterceptor(otel);
        this.interceptors = List.copyOf(b.interceptors);
        this.drainQuietPeriod = b.drainQuietPeriod;
        this.drainTimeout = b.drainTimeout;
        for (String protocol : b.protocols) {
            ServerSettings s = b.settings;
            Integer port = b.ports.get(protocol);
            s = s.withPort(port == null ? 0 : port);
            servers.put(protocol, Protocols.get(protocol).newServer(s));
        }
        this.stats = new ServerCallStats(b.meters != null ? b.meters : new SimpleMeterRegistry());
        java.util.function.Supplier<io.switchboard.server.authz.AuthorizationPolicy> policy =
                ownedPolicyFile != null ? ownedPolicyFile : b.policy;
        this.authorization = policy == null ? null : new io.switchboard.server.authz.AuthorizationInterceptor(policy,
                io.switchboard.server.authz.CallPaths.COMPONENT,
                (call, protocol, peer, path) -> {
                    stats.denied(peer.identity(), path, protocol);
                    // and a refusal in the call figures, so that the console and top show it per operation
                    stats.refused(call.component(), call.operation().name(), protocol,
                            io.switchboard.protocol.PermissionDeniedException.DENIED);
                });
        this.ownsRegistry = b.sharedRegistry == null;
        this.registry = b.sharedRegistry != null ? b.sharedRegistry
                : b.registryUrl == null ? null : RegistryClient.connect(RegistryClient.split(b.registryUrl),
                        b.credential, ClientSettings.defaults().withTls(b.settings.tls()).withToken(b.registryToken));
        this.leaseSeconds = (int) b.lease.toSeconds();
        if (registry != null && leaseSeconds > 0) {
            heartbeat = Executors.newSingleThreadScheduledExecutor(DaemonThreads.named("component-lease-heartbeat"));
            long every = Math.max(100, b.lease.toMillis() / 3);
            renewTimeout = Duration.ofMillis(Math.max(1000, every));
            heartbeat.scheduleWithFixedDelay(this::renewAll, every, every, TimeUnit.MILLISECONDS);
        } else {
            heartbeat = null;
            renewTimeout = null;
        }
    }

    /**
     * Binds {@code entry}, giving each of several registries {@value #BIND_ANSWER_SECONDS} s, so
     * that one that hangs costs the export that rather than the call timeout (30 s). A bind that
     * may have reached a registry that did not answer is not sent to another (it may be bound
     * there), and under a lease it is left to the heartbeat rather than thrown: the heartbeat
     * renews the entry if the bind took, and binds it again where it did not. Thrown, it failed the
     * export of a component whose first registry hung, though the next registry was there.
     */
    private void bind(ComponentEntry entry) {
        try {
            registry.bind(entry, bindTimeout());
        } catch (TransportException e) {
            if (heartbeat == null || e.delivery() != TransportException.Delivery.MAY_HAVE_RUN) {
                throw e;
            }
            LOG.warn("the bind of {} ({}) may have reached a registry that did not answer; the heartbeat binds it "
                    + "again if it is missing: {}", entry.name(), entry.instanceId(), e.getMessage());
        }
    }

    /** Null: the call timeout, with no other registry to move to. */
    private Duration bindTimeout() {
        return registry.urls().size() > 1 ? Duration.ofSeconds(BIND_ANSWER_SECONDS) : null;
    }

    /**
     * One heartbeat: renews every bound entry, and binds again those the registry no longer holds,
     * with a bind's time per registry (with the call timeout a registry that hung held the entry's
     * return through the other for 30 s).
     */
    private void renewAll() {
        for (ComponentEntry e : bound) {
            long started = System.nanoTime();
            try {
                if (!registry.renew(e.name(), e.instanceId(), renewTimeout, stats.summary(e.name()))) {
                    registry.rebind(e, bindTimeout());
                    LOG.info("the registry no longer held {} ({}); bound it again", e.name(), e.instanceId());
                } else {
                    LOG.debug("renewed {} ({}) in {} ms", e.name(), e.instanceId(),
                            (System.nanoTime() - started) / 1_000_000);
                }
            } catch (RuntimeException ex) {
                LOG.warn("could not renew the lease of {} ({}) in {} ms; will try again: {}", e.name(), e.instanceId(),
                        (System.nanoTime() - started) / 1_000_000, ex.getMessage());
            }
        }
    }

    public static Builder builder() {
        return new Builder();
    }

    /** The policy in force; null when the server has none (every caller may call everything). */
    public io.switchboard.server.authz.AuthorizationPolicy authorizationPolicy() {
        return authorization == null ? null : authorization.policy();
    }

    /** The protocols this server speaks, in its order of preference. */
    public List<String> protocols() {
        return List.copyOf(servers.keySet());
    }

    /** Exports under the component's own name. */
    public ComponentEntry export(Skeleton skeleton) {
        return export(skeleton.descriptor().name(), skeleton);
    }

    /**
     * Exports on every protocol and binds {@code name} in the registry (if there is one). Each
     * protocol serves the skeleton behind the server's chain (see the class comment), with one
     * de-duplicator for all of them, so that each call id runs at most once across all protocols.
     */
    public synchronized ComponentEntry export(String name, Skeleton plain) {
        if (closed) {
            throw new IllegalStateException("component server is closed");
        }
        ServiceDescriptor d = plain.descriptor();
        List<ServerInterceptor> steps = chain(tracing, authorization, stats,
                new DeduplicatingInterceptor(RECENT_CALL_BYTES,
                        RECENT_CALL_BYTES_PER_IDENTITY, RECENT_CALL_RETENTION, null), draining, interceptors);
        List<Endpoint> endpoints = new ArrayList<>();
        try {
            for (ProtocolServer server : servers.values()) {
                endpoints.add(server.export(ServerInterceptorChain.of(name, server.protocol(), steps, plain)));
            }
        } catch (RuntimeException e) {
            for (ProtocolServer server : servers.values()) {
                server.unexport(d.name());
            }
            throw e;
        }
        Map<String, String> published = new HashMap<>();
        for (Endpoint e : endpoints) {
            published.putAll(Protocols.get(e.protocol()).published(d, e));
        }
        ComponentEntry entry = new ComponentEntry(name, UUID.randomUUID().toString(), endpoints, d.schema(),
                published.get(ServiceDescriptor.PROTO), published.get(ServiceDescriptor.WSDL), null,
                List.of(ComponentEntry.CALL_IDS), leaseSeconds);
        if (registry != null) {
            warnIfUnreachable(entry);
            bind(entry);
        }
        bound.add(entry);
        LOG.info("exported {} as {} at {}", d.name(), name, endpoints);
        return entry;
    }

    /**
     * The server chain of one component, in the order a call meets it; the same steps for each of
     * its protocols. The counting step sits right around the de-duplicator, which it asks whether
     * a call id is a repeat; tracing (null: off) is outermost and hands refusals on.
     */
    static List<ServerInterceptor> chain(TracingServerInterceptor tracing, ServerCallStats stats,
                                         DeduplicatingInterceptor once, DrainingInterceptor draining,
                                         List<ServerInterceptor> users) {
        return chain(tracing, null, stats, once, draining, users);
    }

    /** As above, with the authorization step (null: no policy) right inside the span. */
    static List<ServerInterceptor> chain(TracingServerInterceptor tracing, ServerInterceptor authorization,
                                         ServerCallStats stats,
                                         DeduplicatingInterceptor once, DrainingInterceptor draining,
                                         List<ServerInterceptor> users) {
        List<ServerInterceptor> steps = new ArrayList<>();
        if (tracing != null) {
            steps.add(tracing);                             // a SERVER span around everything below
        }
        if (authorization != null) {
            steps.add(authorization);                       // before de-duplication: a denied caller learns no outcome
        }
        steps.add(new CallStatsInterceptor(stats, once));   // sees repeats and refusals
        steps.add(once);                                    // a repeat goes no further
        steps.add(draining);                                // counts calls; refuses new ones once closing
        steps.addAll(users);                                // once per call id
        if (PhaseMarks.ENABLED) {
            steps.add(PhaseMarkInterceptor.INSTANCE);       // only the implementation between its marks
        }
        return List.copyOf(steps);
    }

    /**
     * A loopback or wildcard address published to a registry on another host reaches nobody
     * there: say so, and how to publish a reachable one.
     */
    private void warnIfUnreachable(ComponentEntry entry) {
        if (isLoopback(registry.urls().get(0))) {
            return;
        }
        for (Endpoint e : entry.endpoints()) {
            if (isLoopback(e.address()) || ServerSettings.isWildcard(String.valueOf(e.uri().getHost()))) {
                LOG.warn("{} publishes {} to the registry at {}, which other hosts cannot reach: bind to a reachable "
                        + "address, or advertise one (ServerSettings.withAdvertisedHost, --advertise)",
                        entry.name(), e.address(), registry.urls().get(0));
                return;
            }
        }
    }

    private static boolean isLoopback(String url) {
        try {
            String host = java.net.URI.create(url).getHost();
            return host != null && (host.equals("localhost") || host.startsWith("127.") || host.equals("[::1]")
                    || host.equals("::1"));
        } catch (IllegalArgumentException e) {
            return false;
        }
    }

    /**
     * Stops one protocol's listener while the others go on serving, as a crash of that listener
     * would; the registry entry still lists its endpoint, so clients see it fail and fall back.
     * For demonstrations and fault tests; the failsafe (SOAP) cannot be stopped this way. The
     * listener's port stays bound, without listening, until this server closes: its endpoint
     * refuses every connection rather than reach whatever listener the system gives the port to next.
     */
    public synchronized void stopProtocol(String protocol) {
        if (Protocols.failsafe().name().equals(protocol)) {
            throw new IllegalArgumentException(protocol + " is the failsafe; close the whole server instead");
        }
        ProtocolServer server = servers.get(protocol);
        if (server == null) {
            throw new IllegalArgumentException("this server does not speak " + protocol + " (it speaks " + protocols() + ")");
        }
        server.close();
        for (ComponentEntry e : bound) {
            e.endpoint(protocol).ifPresent(this::holdPort);
        }
    }

    /**
     * Binds a socket, without listening, to the port of a stopped listener's {@code endpoint}: a
     * connection to it is refused, and the system gives the port to no other listener that asks
     * for any free port. Without {@code SO_REUSEADDR} if it can (no other socket may then bind the
     * port), with it when connections the listener closed still wait out their TIME_WAIT there.
     */
    private void holdPort(Endpoint endpoint) {
        int port = endpoint.uri().getPort();
        if (port <= 0 || heldPorts.stream().anyMatch(s -> s.getLocalPort() == port)) {
            return;
        }
        for (boolean reuse : new boolean[] {false, true}) {
            Socket held = new Socket();
            try {
                held.setReuseAddress(reuse);
                held.bind(new InetSocketAddress(port));
                heldPorts.add(held);
                return;
            } catch (IOException e) {
                closeQuietly(held);
                if (reuse) {
                    LOG.warn("the port {} of the stopped {} listener could not be held: {}", port, endpoint.protocol(),
                            e.getMessage());
                }
            }
        }
    }

    private static void closeQuietly(Socket socket) {
        try {
            socket.close();
        } catch (IOException e) {
            // closing a socket that never connected: nothing to tell
        }
    }

    /** What the components of this server served, per operation and protocol (also in {@link ServerCallStats#meters}). */
    public ServerCallStats callStats() {
        return stats;
    }

    /**
     * Serves a read-only page (e.g. {@code /metrics}) on the failsafe (SOAP) listener's port, with
     * its TLS, beside the components; see {@link ProtocolServer#mount}.
     */
    public synchronized void mount(String path, WebHandler handler) {
        servers.get(Protocols.failsafe().name()).mount(path, handler);
    }

    /** Connections its listeners refused at TLS (see {@link ProtocolServer#refusedConnections}), by protocol. */
    public Map<String, Long> refusedConnections() {
        Map<String, Long> refused = new LinkedHashMap<>();
        servers.forEach((protocol, server) -> refused.put(protocol, server.refusedConnections()));
        return refused;
    }

    /**
     * Closes gracefully, draining: every listener's health turns NOT_SERVING and the entries are
     * unbound from the registry; the server answers calls for the quiet period
     * ({@link Builder#drain}, while watchers move their clients away; skipped when nothing was bound
     * in a registry), then refuses new calls with a "draining" answer that clients take to another
     * replica ({@link io.switchboard.protocol.DrainingException}: not delivered, no SOAP fallback
     * here), waits for the calls under way up to the drain timeout, and stops the listeners. Safe
     * to call twice. {@link #drainAndClose} does the same and says how the drain went.
     */
    @Override
    public void close() {
        drainAndClose();
    }

    /**
     * {@link #close}, and what the drain did: how many calls were under way when new ones began to
     * be refused, how many of those the drain timeout cut, how many new calls were refused as
     * draining. Null when the server was closed already (the first close reports).
     */
    public Drained drainAndClose() {
        synchronized (this) {
            if (closed) {
                return null;
            }
            closed = true;
        }
        long start = System.nanoTime();
        servers.values().forEach(ProtocolServer::drain);
        if (heartbeat != null) {
            heartbeat.shutdownNow();
        }
        boolean wasBound = registry != null && !bound.isEmpty();
        if (registry != null) {
            for (ComponentEntry e : bound) {
                try {
                    registry.unbind(e.name(), e.instanceId());
                } catch (RuntimeException ex) {
                    LOG.warn("could not unbind {} ({}): {}", e.name(), e.instanceId(), ex.getMessage());
                }
            }
            if (ownsRegistry) {
                registry.close();
            }
        }
        int underWay = 0;
        int cut = 0;
        try {
            if (wasBound && !drainQuietPeriod.isZero()) {
                Thread.sleep(drainQuietPeriod.toMillis());   // still answering while watchers move away
            }
            underWay = draining.refuseNewCalls();
            if (!draining.awaitIdle(drainTimeout)) {
                cut = draining.running();
                LOG.warn("{} call(s) still running after the drain timeout of {} s; stopping them", cut,
                        drainTimeout.toSeconds());
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();   // closing at once, as asked
            cut = draining.running();
        }
        synchronized (this) {
            servers.values().forEach(ProtocolServer::close);
            heldPorts.forEach(ComponentServer::closeQuietly);
            heldPorts.clear();
        }
        if (ownedPolicyFile != null) {
            ownedPolicyFile.close();
        }
        return new Drained(underWay, cut, draining.refused(), Duration.ofNanos(System.nanoTime() - start));
    }

    /**
     * How a {@link #drainAndClose} went.
     *
     * @param underWay calls running when the server began to refuse new ones
     * @param cut      of those, the ones still running when the drain timeout passed (or the closing
     *                 thread was interrupted): stopped with the listeners, their callers told they may have run
     * @param refused  calls refused as draining (not run here; their clients took them to another replica)
     * @param took     the whole close, quiet period included
     */
    public record Drained(int underWay, int cut, long refused, Duration took) {
        @Override
        public String toString() {
            return String.format(java.util.Locale.ROOT, "drained in %.1f s: %d call(s) under way, %d finished, %d cut; "
                    + "%d refused as draining", took.toNanos() / 1e9, underWay, underWay - cut, cut, refused);
        }
    }

    /** Configures a {@link ComponentServer}. Defaults: every protocol on the class path, loopback, ephemeral ports. */
    public static final class Builder {
        private io.opentelemetry.api.OpenTelemetry tracing;
        private boolean tracingSet;
        private List<String> protocols;
        private ServerSettings settings = ServerSettings.defaults();
        private final Map<String, Integer> ports = new HashMap<>();
        private String registryUrl;
        private String credential;
        private java.util.function.Supplier<String> registryToken;
        private RegistryClient sharedRegistry;
        private Duration lease = DEFAULT_LEASE;
        private MeterRegistry meters;
        private final List<ServerInterceptor> interceptors = new ArrayList<>();
        private Duration drainQuietPeriod = DEFAULT_DRAIN_QUIET_PERIOD;
        private Duration drainTimeout = DEFAULT_DRAIN_TIMEOUT;
        private java.util.function.Supplier<io.switchboard.server.authz.AuthorizationPolicy> policy;
        private java.nio.file.Path policyFile;
        private Duration policyInterval;

        private Builder() {
            // the failsafe last: entries list endpoints in this order, the client's preference aside
            String failsafe = Protocols.failsafe().name();
            List<String> all = new ArrayList<>(Protocols.names());
            all.remove(failsafe);
            all.add(failsafe);
            protocols = all;
        }

        public Builder protocols(String... names) {
            protocols = List.of(names);
            return this;
        }

        public Builder protocols(List<String> names) {
            protocols = List.copyOf(names);
            return this;
        }

        /** Listener settings shared by all protocols (bind address, limits, TLS). */
        public Builder settings(ServerSettings serverSettings) {
            settings = Objects.requireNonNull(serverSettings);
            return this;
        }

        /** A fixed port for one protocol; the others pick free ports. */
        public Builder port(String protocol, int port) {
            ports.put(protocol, port);
            return this;
        }

        public Builder registry(String url, String sharedSecret) {
            registryUrl = url;
            credential = sharedSecret;
            sharedRegistry = null;
            return this;
        }

        /**
         * The bearer token the server's own registry client ({@link #registry(String, String)})
         * sends, asked per call; null (the default): none.
         */
        public Builder registryToken(java.util.function.Supplier<String> token) {
            registryToken = token;
            return this;
        }

        /** Binds through a registry client of the caller's, which the server uses but does not close. */
        public Builder registry(RegistryClient client) {
            sharedRegistry = java.util.Objects.requireNonNull(client);
            registryUrl = null;
            return this;
        }

        /**
         * How long the registry keeps an entry without a heartbeat (whole seconds, default 30 s);
         * {@link Duration#ZERO}: no lease, the entry stays until unbound.
         */
        public Builder lease(Duration leaseLength) {
            if (leaseLength.isNegative() || (!leaseLength.isZero() && leaseLength.toSeconds() < 1)) {
                throw new IllegalArgumentException("a lease is zero or at least one second");
            }
            lease = leaseLength;
            return this;
        }

        /**
         * Where the server's call meters go ({@link ServerCallStats}), e.g. a Prometheus registry
         * that {@code /metrics} scrapes; default: a registry of its own, read for the lease reports.
         */
        public Builder meterRegistry(MeterRegistry registry) {
            meters = Objects.requireNonNull(registry);
            return this;
        }

        /**
         * Traces every call the exported components run, a SERVER span each
         * ({@link TracingServerInterceptor}), with this OpenTelemetry; null turns tracing off. By default
         * the global one ({@code GlobalOpenTelemetry.get()}, read when the server is built) when
         * an SDK is registered there, else none.
         */
        public Builder tracing(io.opentelemetry.api.OpenTelemetry openTelemetry) {
            this.tracing = openTelemetry;
            this.tracingSet = true;
            return this;
        }

        /**
         * Adds a step of your own to the chain of every component this server exports, after
         * those added before it (see the class comment for where the chain places them: inside the
         * span, the call figures and the de-duplication, so it runs once per call id and a repeat
         * gets its outcome). It sees {@link io.switchboard.protocol.ServerCall#protocol()}, the
         * operation, the request and the call id; it may refuse a call by throwing, which the client
         * receives (a {@code RemoteInvocationException} with the message, or the operation's
         * declared fault). One instance serves every call, concurrently.
         *
         * <pre>{@code
         * ComponentServer server = ComponentServer.builder()
         *         .interceptor((call, next) -> {
         *             if (call.protocol().equals("soap") && call.operation().name().equals("reset")) {
         *                 throw new SecurityException("reset is refused over soap: call it over grpc");
         *             }
         *             return next.proceed(call);
         *         })
         *         .build();
         * }</pre>
         */
        public Builder interceptor(ServerInterceptor interceptor) {
            interceptors.add(Objects.requireNonNull(interceptor, "interceptor"));
            return this;
        }

        /**
         * How {@link ComponentServer#close} drains: {@code quietPeriod} of answering after the
         * entries are unbound (default 1 s; zero: none), then up to {@code timeout} for the calls
         * under way (default 30 s) while new ones are refused.
         */
        public Builder drain(Duration quietPeriod, Duration timeout) {
            if (quietPeriod.isNegative() || timeout.isNegative()) {
                throw new IllegalArgumentException("drain times are zero or more");
            }
            drainQuietPeriod = quietPeriod;
            drainTimeout = timeout;
            return this;
        }

        /**
         * Asks {@code policy} about every call before it runs ({@link io.switchboard.server.authz.AuthorizationPolicy}):
         * a denied caller gets a {@code PermissionDeniedException}. Without a policy every caller
         * may call everything.
         */
        public Builder authorization(io.switchboard.server.authz.AuthorizationPolicy policy) {
            Objects.requireNonNull(policy, "policy");
            return authorization(() -> policy);
        }

        /**
         * As {@link #authorization(io.switchboard.server.authz.AuthorizationPolicy)}, with the policy
         * {@code policy} holds at each call: a {@link io.switchboard.server.authz.PolicyFile} of the
         * caller's, which the caller closes.
         */
        public Builder authorization(java.util.function.Supplier<io.switchboard.server.authz.AuthorizationPolicy> policy) {
            this.policy = Objects.requireNonNull(policy, "policy");
            this.policyFile = null;
            return this;
        }

        /**
         * The policy in {@code file}, read when the server is built (an invalid one fails
         * {@link #build} with the line and reason) and again whenever it changes, checked every
         * {@code interval}; the server stops watching when it closes.
         */
        public Builder authorization(java.nio.file.Path file, Duration interval) {
            this.policyFile = Objects.requireNonNull(file, "file");
            this.policyInterval = Objects.requireNonNull(interval, "interval");
            this.policy = null;
            return this;
        }

        public ComponentServer build() {
            String failsafe = Protocols.failsafe().name();
            if (!protocols.contains(failsafe)) {
                throw new IllegalArgumentException("a component server speaks " + failsafe
                        + ", the protocol every party shares");
            }
            return new ComponentServer(this);
        }
    }
}
