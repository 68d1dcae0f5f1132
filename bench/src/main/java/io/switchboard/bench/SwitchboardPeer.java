package io.switchboard.bench;

import io.switchboard.components.echo.EchoComponent;
import io.switchboard.components.echo.EchoStub;
import io.switchboard.metastub.CallRecord;
import io.switchboard.metastub.MetaStub;
import io.switchboard.metastub.Policies;
import io.switchboard.metastub.SelectionPolicy;
import io.switchboard.protocol.CallOptions;
import io.switchboard.protocol.ClientSettings;
import io.switchboard.protocol.Endpoint;
import io.switchboard.protocol.spi.ProtocolProvider;
import io.switchboard.protocol.spi.Protocols;
import io.switchboard.registry.ComponentEntry;
import io.switchboard.client.Switchboard;
import java.io.IOException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.atomic.AtomicReference;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * Switchboard as a user calls it: the generated echo stub over a meta-stub found through the
 * registry, with each call either pinned to one protocol ({@code soap}, {@code grpc}) or left to a
 * selection policy ({@code adaptive}, {@code size}, or any name {@link Policies#byName} knows).
 * tcp and gRPC have two rows each: {@code tcp} and {@code grpc} over TCP, {@code tcp-unix} and
 * {@code grpc-unix} over the server's Unix domain sockets, each through a meta-stub of its own on
 * the entry's endpoints (a client on the server's host takes the socket whenever the entry names
 * it, so the TCP row is given the endpoint without it). {@code tcp-lookup} pins tcp on the stub the
 * policies share, so that what their choice costs shows apart from what their stub costs.
 *
 * <pre>{@code
 * try (SwitchboardPeer.Connection c = SwitchboardPeer.connect(registryUrl)) {
 *     Peer soap = c.peer("soap");
 *     Object back = soap.roundTrip(Payload.of(Workload.DOUBLES, 1000));
 * }
 * }</pre>
 */
final class SwitchboardPeer implements Peer {
    private static final Pattern PORT = Pattern.compile(":(\\d{1,5})(?=/|$)");

    private final String name;
    private final EchoStub direct;
    private final EchoStub counted;
    private final Connection connection;
    /**
     * Whether {@link #countWays} counts this row's calls by protocol and way: a policy row's, whose
     * policy chooses them, and {@link #TCP_LOOKUP}'s, to show they took the Unix socket.
     */
    private final boolean countsWays;
    /** Where this row's calls are counted, null while they are not (warm-up, pinned rows). */
    private WayCounts ways;

    /** tcp over the server's Unix domain socket; the TCP row is {@code tcp}. */
    static final String TCP_UNIX = "tcp-unix";
    /**
     * tcp pinned on each call through the stub the policy rows share (the registry lookup's, over
     * the Unix socket as theirs): their path without the choice, where {@link #TCP_UNIX} has a
     * meta-stub of its own.
     */
    static final String TCP_LOOKUP = "tcp-lookup";
    private static final String TCP = "tcp";
    /** The rows over a server's Unix domain socket, each with its protocol (whose own row goes over TCP). */
    static final Map<String, String> UNIX_WAYS = unixWays();

    private static Map<String, String> unixWays() {
        Map<String, String> ways = new LinkedHashMap<>();
        ways.put(TCP_UNIX, TCP);
        ways.put("grpc-unix", "grpc");
        return Collections.unmodifiableMap(ways);
    }

    private SwitchboardPeer(String name, CallOptions options, boolean countsWays, Connection connection) {
        this(name, connection.direct.withOptions(options), connection.counted.withOptions(options), countsWays, connection);
    }

    private SwitchboardPeer(String name, EchoStub direct, EchoStub counted, boolean countsWays, Connection connection) {
        this.name = name;
        this.direct = direct;
        this.counted = counted;
        this.countsWays = countsWays;
        this.connection = connection;
    }

    static Connection connect(String registryUrl) throws IOException {
        return new Connection(registryUrl);
    }

    @Override
    public boolean marksCalls() {
        return true;   // the meta-stub's PhaseMarkInterceptor
    }

    @Override
    public String name() {
        return name;
    }

    @Override
    public boolean countWays(WayCounts ways) {
        this.ways = countsWays ? ways : null;
        return countsWays;
    }

    /**
     * One call; while counting, the connection's listener, which runs on this thread when a
     * blocking attempt ends, holds its records in this row's {@link WayCounts}, to be counted
     * after the call's time is taken.
     */
    @Override
    public Object roundTrip(Payload p) {
        connection.counting = ways;
        try {
            return call(direct, p);
        } finally {
            connection.counting = null;
        }
    }

    @Override
    public long requestBytes(Payload p) {
        call(counted, p);   // first call through the relay opens its connections (HTTP/2 preface, ...)
        long before = connection.upstreamBytes();
        call(counted, p);
        return connection.upstreamBytes() - before;
    }

    private static String withoutQuery(String address) {
        int query = address.indexOf('?');
        return query < 0 ? address : address.substring(0, query);
    }

    /** One round trip of the payload through a generated echo stub. */
    static Object call(EchoStub echo, Payload p) {
        switch (p.workload()) {
            case DOUBLES:
                return echo.echoDoubles(p.doubles());
            case LIST:
                return echo.echoList(p.list());
            default:
                echo.empty();
                return null;
        }
    }

    /** The stub this peer's timed calls use, for the async workload. */
    EchoStub stub() {
        return direct;
    }

    @Override
    public void close() {
        // the connection is shared by all Switchboard peers and closed with it
    }

    /**
     * One lookup in the bench server's registry, shared by every Switchboard peer: the stub the
     * timed calls use, and a second stub whose endpoints go through {@link CountingProxy}s.
     */
    static final class Connection implements AutoCloseable {
        private final Switchboard switchboard;
        private final EchoStub direct;
        private final EchoStub counted;
        private final MetaStub countedChannel;
        private final List<CountingProxy> proxies = new ArrayList<>();
        private final ClientSettings settings;
        private final ComponentEntry entry;
        /** The meta-stubs of the tcp and gRPC rows, each with clients (and so connections) of its own. */
        private final List<MetaStub> wayChannels = new ArrayList<>();
        /**
         * The counts of the policy row whose call is under way on the sweep's thread, null between
         * calls: set and read on that thread only, since a blocking call's records are made on it.
         */
        private WayCounts counting;

        private Connection(String registryUrl) throws IOException {
            // Large enough for the sweep's biggest messages, and a bound so that nothing hangs.
            settings = ClientSettings.defaults().withMaxMessageBytes(BenchServer.MAX_MESSAGE_BYTES)
                    .withCallTimeout(Duration.ofMillis(Sweep.CALL_TIMEOUT_MILLIS));
            // follow(false): no watch thread polling the registry amid the timings
            switchboard = Switchboard.builder(registryUrl).settings(settings).follow(false).listener(this::count).connect();
            direct = switchboard.lookup(EchoComponent.DESCRIPTOR, EchoComponent::stub);
            entry = switchboard.registry().lookup(EchoComponent.DESCRIPTOR.name()).get(0);
            List<Endpoint> relayed = new ArrayList<>();
            for (Endpoint e : entry.endpoints()) {
                ProtocolProvider provider = Protocols.all().get(e.protocol());
                if (provider != null && provider.inProcessOnly()) {
                    continue;   // the server JVM's in-process endpoint: no port, and never a candidate from here
                }
                Matcher m = PORT.matcher(e.address());
                if (!m.find()) {
                    throw new IOException("no port in endpoint " + e);
                }
                CountingProxy proxy = new CountingProxy(Integer.parseInt(m.group(1)));
                proxies.add(proxy);
                // without a query: a tcp endpoint's names the Unix socket, which would go around the proxy
                relayed.add(new Endpoint(e.protocol(), e.address().substring(0, m.start()) + ":" + proxy.port()
                        + withoutQuery(e.address().substring(m.end()))));
            }
            countedChannel = MetaStub.builder(EchoComponent.DESCRIPTOR).endpoints(relayed).settings(settings).build();
            counted = EchoComponent.stub(countedChannel);
        }

        /** The call listener of {@code direct}: holds a policy row's timed attempts for counting, ignores the rest. */
        private void count(CallRecord r) {
            WayCounts ways = counting;
            if (ways != null) {
                ways.hold(r);
            }
        }

        /**
         * The peer for a protocol name (pinned on every call) or a policy name; throws
         * {@link IllegalArgumentException} with the reason when the name is neither.
         */
        Peer peer(String name) {
            if (UNIX_WAYS.containsKey(name)) {
                return wayPeer(UNIX_WAYS.get(name), true);
            }
            if (UNIX_WAYS.containsValue(name)) {
                return wayPeer(name, false);
            }
            if (name.equals(TCP_LOOKUP)) {
                return new SwitchboardPeer(name, CallOptions.DEFAULT.with(MetaStub.PROTOCOL, TCP), true, this);
            }
            if (name.equals(RawTcpPeer.NAME)) {
                return new RawTcpPeer(unixSocket());
            }
            if (Protocols.names().contains(name)) {
                return new SwitchboardPeer(name, CallOptions.DEFAULT.with(MetaStub.PROTOCOL, name), false, this);
            }
            SelectionPolicy policy = Policies.byName(name);
            return new SwitchboardPeer(name, CallOptions.DEFAULT.with(MetaStub.POLICY, policy), true, this);
        }

        /** The Unix socket the entry's tcp endpoint names ({@code ?unix=PATH}). */
        private java.nio.file.Path unixSocket() {
            Endpoint tcp = entry.endpoint(TCP).orElseThrow(() -> new IllegalArgumentException("the server has no tcp endpoint"));
            String query = java.net.URI.create(tcp.address()).getRawQuery();
            for (String pair : query == null ? new String[0] : query.split("&")) {
                if (pair.startsWith("unix=")) {
                    return java.nio.file.Path.of(java.net.URLDecoder.decode(pair.substring(5), java.nio.charset.StandardCharsets.UTF_8));
                }
            }
            throw new IllegalArgumentException("the server has no Unix socket (not Linux, or -Dswitchboard.tcp.unix=false)");
        }

        /**
         * A row of a protocol with two ways (tcp, gRPC): calls pinned to it through a meta-stub on the
         * entry's endpoints, its own without the Unix socket over TCP; over the socket ({@code unix}),
         * the row checks that its calls do go over it.
         */
        private Peer wayPeer(String protocol, boolean unix) {
            String name = unix ? protocol + "-unix" : protocol;
            Endpoint own = entry.endpoint(protocol).orElseThrow(() -> new IllegalArgumentException("the server has no "
                    + protocol + " endpoint"));
            if (unix && !own.address().contains("?unix=")) {
                throw new IllegalArgumentException("the server has no Unix socket for " + protocol + " (not Linux, or -Dswitchboard."
                        + protocol + ".unix=false)");
            }
            List<Endpoint> endpoints = new ArrayList<>();
            for (Endpoint e : entry.endpoints()) {
                ProtocolProvider provider = Protocols.all().get(e.protocol());
                if (provider == null || !provider.inProcessOnly()) {
                    endpoints.add(e == own && !unix ? new Endpoint(protocol, withoutQuery(e.address())) : e);
                }
            }
            // the first call's way only: the listener runs on every timed call too, where it must cost nothing
            String expected = unix ? "unix" : "tcp";
            AtomicReference<String> firstVia = new AtomicReference<>();
            MetaStub channel = MetaStub.builder(EchoComponent.DESCRIPTOR).endpoints(endpoints).settings(settings)
                    .serverRecognisesCallIds(entry.has(ComponentEntry.CALL_IDS))
                    .listener(r -> firstVia.compareAndSet(null, String.valueOf(r.via())))
                    .build();
            wayChannels.add(channel);
            EchoStub stub = EchoComponent.stub(channel).withOptions(CallOptions.DEFAULT.with(MetaStub.PROTOCOL, protocol));
            stub.empty();
            if (!expected.equals(firstVia.get())) {
                throw new IllegalArgumentException(name + ": its first call went via " + firstVia.get() + ", not " + expected);
            }
            return new SwitchboardPeer(name, stub, counted.withOptions(CallOptions.DEFAULT.with(MetaStub.PROTOCOL, protocol)),
                    false, this);
        }

        long upstreamBytes() {
            return proxies.stream().mapToLong(CountingProxy::upstreamBytes).sum();
        }

        @Override
        public void close() {
            wayChannels.forEach(MetaStub::close);
            countedChannel.close();
            switchboard.close();
            proxies.forEach(CountingProxy::close);
        }
    }
}
