package io.switchboard.examples.bench;

import io.switchboard.components.echo.EchoComponent;
import io.switchboard.components.echo.EchoStub;
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
import java.util.List;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * Switchboard as a user calls it: the generated echo stub over a meta-stub found through the
 * registry, with each call either pinned to one protocol ({@code soap}, {@code grpc}) or left to a
 * selection policy ({@code adaptive}, {@code size}, or any name {@link Policies#byName} knows).
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

    private SwitchboardPeer(String name, CallOptions options, Connection connection) {
        this.name = name;
        this.direct = connection.direct.withOptions(options);
        this.counted = connection.counted.withOptions(options);
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
    public Object roundTrip(Payload p) {
        return call(direct, p);
    }

    @Override
    public long requestBytes(Payload p) {
        call(counted, p);   // first call through the relay opens its connections (HTTP/2 preface, ...)
        long before = connection.upstreamBytes();
        call(counted, p);
        return connection.upstreamBytes() - before;
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

        private Connection(String registryUrl) throws IOException {
            // Large enough for the sweep's biggest messages, and a bound so that nothing hangs.
            ClientSettings settings = ClientSettings.defaults().withMaxMessageBytes(BenchServer.MAX_MESSAGE_BYTES)
                    .withCallTimeout(Duration.ofMillis(Sweep.CALL_TIMEOUT_MILLIS));
            // follow(false): no watch thread polling the registry amid the timings
            switchboard = Switchboard.builder(registryUrl).settings(settings).follow(false).connect();
            direct = switchboard.lookup(EchoComponent.DESCRIPTOR, EchoComponent::stub);
            ComponentEntry entry = switchboard.registry().lookup(EchoComponent.DESCRIPTOR.name()).get(0);
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
                relayed.add(new Endpoint(e.protocol(), e.address().substring(0, m.start()) + ":" + proxy.port()
                        + e.address().substring(m.end())));
            }
            countedChannel = MetaStub.builder(EchoComponent.DESCRIPTOR).endpoints(relayed).settings(settings).build();
            counted = EchoComponent.stub(countedChannel);
        }

        /**
         * The peer for a protocol name (pinned on every call) or a policy name; throws
         * {@link IllegalArgumentException} with the reason when the name is neither.
         */
        Peer peer(String name) {
            if (Protocols.names().contains(name)) {
                return new SwitchboardPeer(name, CallOptions.DEFAULT.with(MetaStub.PROTOCOL, name), this);
            }
            SelectionPolicy policy = Policies.byName(name);
            return new SwitchboardPeer(name, CallOptions.DEFAULT.with(MetaStub.POLICY, policy), this);
        }

        long upstreamBytes() {
            return proxies.stream().mapToLong(CountingProxy::upstreamBytes).sum();
        }

        @Override
        public void close() {
            countedChannel.close();
            switchboard.close();
            proxies.forEach(CountingProxy::close);
        }
    }
}
