package io.switchboard.registry.server;

import io.switchboard.protocol.DaemonThreads;
import io.switchboard.registry.store.RegistryStore;
import io.switchboard.registry.store.InMemoryRegistryStore;
import io.switchboard.protocol.Endpoint;
import io.switchboard.protocol.spi.ProtocolServer;
import io.switchboard.protocol.spi.Protocols;
import io.switchboard.protocol.ServerSettings;
import io.switchboard.registry.wire.RegistryComponent;
import java.time.Clock;
import java.time.Duration;
import java.util.Objects;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The registry served over SOAP at {@code http://HOST:PORT/axis2/services/Registry}, with a sweeper
 * that drops entries whose lease ran out.
 *
 * <pre>{@code
 * try (RegistryServer registry = RegistryServer.builder().port(8081).secret("s3cret")
 *         .store(RegistryStores.open("file:/var/lib/switchboard/registry.json")).start()) {
 *     System.out.println(registry.endpoint());        // give this URL to servers and clients
 * }
 * }</pre>
 */
public final class RegistryServer implements AutoCloseable {
    /** The port the standalone registry listens on unless told otherwise. */
    public static final int DEFAULT_PORT = 8081;
    private static final Logger LOG = LoggerFactory.getLogger(RegistryServer.class);

    private final ProtocolServer soap;
    private final RegistryService service;
    private final Endpoint endpoint;
    private final ScheduledExecutorService sweeper;
    private final boolean console;
    private final WatchStreamServer stream;
    /** Calls the authorization policy denied, per identity and path; empty without a policy. */
    private final io.switchboard.server.ServerCallStats denials;
    /** A policy file this server watches and closes; null when it has none or the caller owns it. */
    private final io.switchboard.server.authz.PolicyFile ownedPolicyFile;

    /**
     * A long poll ({@code watch}) outlives the checks at its start by up to its wait. Before its
     * answer leaves, a caller whose client certificate was revoked (or its authority withdrawn)
     * meanwhile is refused as its next call would be, and when the policy was replaced (a policy
     * file edited), the one in force is asked again, as the watch stream does before each change
     * it sends. Other operations are answered as checked: their effect has happened by then.
     *
     * @param authorization null without a policy
     */
    private static io.switchboard.protocol.ServerInterceptor longPollsAskedAgain(
            io.switchboard.server.authz.AuthorizationInterceptor authorization) {
        return (call, next) -> {
            io.switchboard.server.authz.AuthorizationPolicy before = authorization == null ? null
                    : authorization.policy();
            Object answer = next.proceed(call);
            if (call.operation().name().equals("watch")) {
                if (!io.switchboard.protocol.ServerCallContext.callerStillTrusted()) {
                    throw io.switchboard.protocol.PermissionDeniedException.unauthenticated(
                            RegistryPaths.SERVICE + "watch", io.switchboard.protocol.spi.CallerIdentity.NO_LONGER_TRUSTED);
                }
                if (authorization != null && authorization.policy() != before) {
                    authorization.check(call.protocol(), call.peer(), RegistryPaths.INSTANCE.paths(call));
                }
            }
            return answer;
        };
    }

    private RegistryServer(Builder b) {
        // first: an invalid policy file refuses the registry before its listener opens
        this.ownedPolicyFile = b.policyFile == null ? null
                : io.switchboard.server.authz.PolicyFile.watch(b.policyFile, b.policyInterval);
        java.util.function.Supplier<io.switchboard.server.authz.AuthorizationPolicy> policy =
                ownedPolicyFile != null ? ownedPolicyFile : b.policy;
        this.denials = new io.switchboard.server.ServerCallStats(b.meters != null ? b.meters
                : new io.micrometer.core.instrument.simple.SimpleMeterRegistry());
        io.switchboard.server.authz.AuthorizationInterceptor authorization = policy == null ? null
                : new io.switchboard.server.authz.AuthorizationInterceptor(policy, RegistryPaths.INSTANCE,
                        (call, protocol, peer, path) -> denials.denied(peer.identity(), path, protocol));
        this.service = new RegistryService(b.store, b.secret, b.clock, authorization != null);
        // the verifier applies to both listeners: SOAP (its skeleton gets SOAP's peer) and the stream's
        ServerSettings settings = b.tokenVerifier == null ? b.settings : b.settings.withTokenVerifier(b.tokenVerifier);
        this.soap = Protocols.failsafe().newServer(settings);
        this.console = b.console;
        try {
            io.switchboard.protocol.Skeleton skeleton = RegistryComponent.skeleton(service);
            if (b.meters != null) {
                skeleton = new io.switchboard.server.ServerCallStats(b.meters).counting(skeleton, "Registry",
                        soap.protocol());
            }
            if (authorization != null) {   // before the call is counted or run
                skeleton = io.switchboard.protocol.ServerInterceptorChain.of("Registry", soap.protocol(),
                        java.util.List.of(longPollsAskedAgain(authorization), authorization), skeleton);
            } else if (settings.tls() != null) {
                skeleton = io.switchboard.protocol.ServerInterceptorChain.of("Registry", soap.protocol(),
                        java.util.List.of(longPollsAskedAgain(null)), skeleton);
            }
            this.endpoint = soap.export(skeleton);
            if (b.console) {
                soap.mount(RegistryConsole.PATH, new RegistryConsole(service, endpoint.address(), denials::denials,
                        authorization));
            }
            this.stream = b.watchStream ? new WatchStreamServer(service, settings, endpoint.uri().getHost(),
                    b.watchPort, b.maxWatches, b.maxWatchesPerClient, authorization) : null;
            service.watches().streamAt(stream == null ? null : stream.address());
            if (b.meters != null) {
                meters(b.meters, this);
            }
        } catch (RuntimeException e) {
            soap.close();
            b.store.close();
            if (ownedPolicyFile != null) {
                ownedPolicyFile.close();
            }
            throw e;
        }
        this.sweeper = Executors.newSingleThreadScheduledExecutor(DaemonThreads.named("registry-lease-sweeper"));
        long every = b.sweepInterval.toMillis();
        sweeper.scheduleWithFixedDelay(() -> {
            try {
                service.sweep();
            } catch (RuntimeException e) {
                LOG.warn("lease sweep failed; will try again: {}", e.toString());
            }
        }, every, every, TimeUnit.MILLISECONDS);
    }

    /**
     * The registry's own gauges beside its calls ({@code switchboard.server.calls}, component
     * {@code Registry}): entries in its store, leases it holds, call figures reported to it, watch streams open and
     * refused, SOAP connections shed at the connection limit.
     */
    private static void meters(io.micrometer.core.instrument.MeterRegistry meters, RegistryServer server) {
        RegistryService service = server.service;
        io.micrometer.core.instrument.Gauge.builder("switchboard.registry.entries", service,
                s -> s.store().size()).description("entries in the registry's store").register(meters);
        io.micrometer.core.instrument.Gauge.builder("switchboard.registry.leases", service,
                s -> s.live().values().stream().mapToInt(java.util.Map::size).sum())
                .description("leases this registry server holds").register(meters);
        io.micrometer.core.instrument.FunctionCounter.builder("switchboard.registry.reports", service,
                RegistryService::reportCount).description("call figures received with lease renewals")
                .register(meters);
        io.micrometer.core.instrument.Gauge.builder("switchboard.registry.watch.streams", server,
                RegistryServer::openWatchStreams).description("watch streams open").register(meters);
        io.micrometer.core.instrument.FunctionCounter.builder("switchboard.registry.watch.refused", server,
                RegistryServer::refusedWatchStreams).description("watch streams refused: over the limit or a client's share")
                .register(meters);
        io.micrometer.core.instrument.FunctionCounter.builder("switchboard.registry.reads.refused", server,
                RegistryServer::refusedStreamReads).description("reads on the stream listener refused: over its limit"
                        + " or a connection's share").register(meters);
        io.micrometer.core.instrument.FunctionCounter.builder("switchboard.registry.connections.shed", server,
                RegistryServer::shedConnections).description("SOAP connections displaced or refused at the listener's limit")
                .register(meters);
    }

    /** Calls the authorization policy denied, per identity and path, the most denied first. */
    public java.util.List<io.switchboard.server.ServerCallStats.Denial> denials() {
        return denials.denials();
    }

    public static Builder builder() {
        return new Builder();
    }

    /** The registry's SOAP endpoint URL, as clients and servers pass it around. */
    public String endpoint() {
        return endpoint.address();
    }

    public String wsdlUrl() {
        return endpoint.address() + "?wsdl";
    }

    /** The console's address ({@code http(s)://HOST:PORT/console}), on the registry's port; null when turned off. */
    public String consoleUrl() {
        return console ? root() + RegistryConsole.PATH : null;
    }

    /** {@code http(s)://HOST:PORT} of the registry's listener. */
    String root() {
        java.net.URI u = endpoint.uri();
        return u.getScheme() + "://" + u.getRawAuthority();
    }

    /**
     * Serves a read-only page (e.g. {@code /metrics}) on the registry's port, with its TLS; see
     * {@link ProtocolServer#mount}.
     */
    public void mount(String path, io.switchboard.protocol.spi.WebHandler handler) {
        soap.mount(path, handler);
    }

    /** Connections refused at TLS: callers without a trusted certificate, plain HTTP on the TLS port. */
    public long refusedConnections() {
        return soap.refusedConnections();
    }

    public RegistryStore store() {
        return service.store();
    }

    /** The registry component itself, for a sweep on demand in tests. */
    public RegistryService service() {
        return service;
    }

    /** Where watches stream from ({@code grpc://HOST:PORT}); null when turned off. */
    public String watchStreamAddress() {
        return stream == null ? null : stream.address();
    }

    /** Watch streams open now. */
    public int openWatchStreams() {
        return stream == null ? 0 : stream.open();
    }

    /** Watch streams refused so far: over this server's limit or over a client's share. */
    public long refusedWatchStreams() {
        return stream == null ? 0 : stream.refused();
    }

    /** Reads on the stream listener refused so far: over its limit or over a connection's share. */
    public long refusedStreamReads() {
        return stream == null ? 0 : stream.refusedReads();
    }

    /** The stream listener, or null; for tests. */
    WatchStreamServer watchStream() {
        return stream;
    }

    /**
     * SOAP connections this server closed or turned away at its connection limit so far (idle ones
     * displaced, new ones refused while all were busy): 0 when clients never pressed on the limit.
     */
    public long shedConnections() {
        return soap.shedConnections();
    }

    @Override
    public void close() {
        sweeper.shutdownNow();
        if (stream != null) {
            stream.close();
        }
        service.watches().close();
        soap.close();
        service.store().close();
        if (ownedPolicyFile != null) {
            ownedPolicyFile.close();
        }
    }

    /** Configures a {@link RegistryServer}. Defaults: loopback, an ephemeral port, in-memory store, open writes. */
    public static final class Builder {
        private ServerSettings settings = ServerSettings.defaults().withMaxMessageBytes(4L << 20);
        private io.switchboard.protocol.TokenVerifier tokenVerifier;
        private RegistryStore store = new InMemoryRegistryStore();
        private String secret;
        private Clock clock = Clock.systemUTC();
        private Duration sweepInterval = Duration.ofSeconds(1);
        private boolean console = true;
        private io.micrometer.core.instrument.MeterRegistry meters;
        private boolean watchStream = true;
        private int watchPort;
        private int maxWatches = 20_000;
        private int maxWatchesPerClient = 4_096;
        private java.util.function.Supplier<io.switchboard.server.authz.AuthorizationPolicy> policy;
        private java.nio.file.Path policyFile;
        private Duration policyInterval;

        public Builder port(int port) {
            settings = settings.withPort(port);
            return this;
        }

        /**
         * The host its endpoint publishes, for clients on other hosts (default: the bind address,
         * or the first non-loopback address when bound to all).
         */
        public Builder advertise(String host) {
            settings = settings.withAdvertisedHost(host);
            return this;
        }

        public Builder bindAddress(String address) {
            settings = settings.withBindAddress(address);
            return this;
        }

        /**
         * Serves the registry over TLS ({@code https://}) with this key, e.g. {@code
         * TlsSettings.keyStore(Path.of("registry.p12"), password)}; clients must trust its certificate.
         * With a trust store too ({@code TlsSettings.of(key, trust, password)}) every caller, reader
         * or writer, must present a certificate it trusts (mutual TLS).
         */
        public Builder tls(io.switchboard.protocol.TlsSettings serverTls) {
            settings = settings.withTls(serverTls);
            return this;
        }

        public Builder settings(ServerSettings serverSettings) {
            settings = Objects.requireNonNull(serverSettings);
            return this;
        }

        public Builder store(RegistryStore registryStore) {
            store = Objects.requireNonNull(registryStore);
            return this;
        }

        /**
         * Verifies the bearer tokens of callers on both listeners (SOAP and the watch stream's): a
         * verified token names the caller, one that does not verify refuses the call; null (the
         * default): tokens are not looked at. Applies whatever {@link #settings} says.
         *
         * <pre>{@code
         * RegistryServer.builder().tls(tls).tokenVerifier(JwtTokenVerifier.builder().jwks(keys)
         *         .issuer(iss).audience("registry").build()).start();
         * }</pre>
         */
        public Builder tokenVerifier(io.switchboard.protocol.TokenVerifier verifier) {
            tokenVerifier = verifier;
            return this;
        }

        /** The shared secret that bind, rebind and unbind must carry; null leaves writes open. */
        public Builder secret(String sharedSecret) {
            secret = sharedSecret;
            return this;
        }

        /** The clock leases are measured by (tests move a fake one). */
        public Builder clock(Clock leaseClock) {
            clock = Objects.requireNonNull(leaseClock);
            return this;
        }

        /** How often entries whose lease ran out are looked for (default 1 s). */
        public Builder sweepInterval(Duration interval) {
            if (interval.toMillis() <= 0) {
                throw new IllegalArgumentException("the sweep interval must be positive");
            }
            sweepInterval = interval;
            return this;
        }

        /**
         * Whether the read-only console is served at {@code /console} on the registry's port (default
         * true); see {@link RegistryConsole}.
         */
        public Builder console(boolean serveConsole) {
            console = serveConsole;
            return this;
        }

        /**
         * Counts the registry's own calls and keeps its gauges in {@code registry} (e.g. one that
         * {@code /metrics} scrapes); default: no meters.
         */
        public Builder meterRegistry(io.micrometer.core.instrument.MeterRegistry registry) {
            meters = Objects.requireNonNull(registry);
            return this;
        }

        /**
         * Whether watches stream over gRPC from a listener of their own (default true): each client
         * then follows its names on one HTTP/2 connection with no thread of the registry's held;
         * false leaves SOAP long polls only.
         */
        public Builder watchStream(boolean serve) {
            watchStream = serve;
            return this;
        }

        /** The watch stream's port (default 0: any free one; the SOAP {@code watch} answer tells clients where). */
        public Builder watchPort(int port) {
            if (port < 0 || port > 65_535) {
                throw new IllegalArgumentException("not a port: " + port);
            }
            watchPort = port;
            return this;
        }

        /**
         * Watch streams this server holds at most (default 20,000), and at most per client
         * remote address (default 4,096; a host's share, however many connections it opens); one
         * more is refused with the reason, never dropped later.
         */
        public Builder maxWatches(int total, int perClient) {
            if (total <= 0 || perClient <= 0) {
                throw new IllegalArgumentException("watch limits must be positive");
            }
            maxWatches = total;
            maxWatchesPerClient = perClient;
            return this;
        }

        /**
         * Asks {@code policy} about every call, on SOAP and the gRPC listener, with the entry's
         * name in the path ({@code /switchboard.registry.Registry/bind/team-a.billing}; see
         * docs/security.md): who may bind which names, who may look up or watch them. The shared
         * secret, if any, is still required of writes.
         */
        public Builder authorization(io.switchboard.server.authz.AuthorizationPolicy authorizationPolicy) {
            Objects.requireNonNull(authorizationPolicy, "policy");
            return authorization(() -> authorizationPolicy);
        }

        /** As {@link #authorization(io.switchboard.server.authz.AuthorizationPolicy)}, with the policy {@code source} holds at each call. */
        public Builder authorization(java.util.function.Supplier<io.switchboard.server.authz.AuthorizationPolicy> source) {
            policy = Objects.requireNonNull(source, "policy");
            policyFile = null;
            return this;
        }

        /**
         * The policy in {@code file}, read at start (an invalid one refuses to start, with the line
         * and reason) and again whenever it changes, checked every {@code interval}.
         */
        public Builder authorization(java.nio.file.Path file, Duration interval) {
            policyFile = Objects.requireNonNull(file, "file");
            policyInterval = Objects.requireNonNull(interval, "interval");
            policy = null;
            return this;
        }

        public RegistryServer start() {
            return new RegistryServer(this);
        }
    }
}
