package io.switchboard.bench;

import io.switchboard.components.echo.EchoComponent;
import io.switchboard.components.echo.EchoStub;
import io.switchboard.metastub.CallRecord;
import io.switchboard.metastub.MetaStub;
import io.switchboard.protocol.CallOptions;
import io.switchboard.protocol.ClientSettings;
import io.switchboard.protocol.Endpoint;
import io.switchboard.protocol.PermissionDeniedException;
import io.switchboard.protocol.TlsSettings;
import java.net.URI;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.concurrent.atomic.AtomicReference;
import java.util.stream.Collectors;

/**
 * The security cost rows: the echo component pinned to tcp over TCP with mutual TLS
 * ({@code tcp-mtls}), and the same with a 20-rule authorization policy on the server
 * ({@code tcp-mtls-authz}), each on a component server of its own in the bench server
 * ({@link SecuredEchoServers}). Beside the {@code tcp} row of the same run they give the cost of
 * mutual TLS ({@code tcp-mtls ÷ tcp}) and of the policy ({@code tcp-mtls-authz ÷ tcp-mtls}).
 *
 * <p>Before it is timed, a row proves its wiring, so that it cannot measure something else: its
 * first call goes over TCP to a {@code tcps://} endpoint; a client that presents no certificate is
 * refused; and another trusted identity is denied by the policy on {@code tcp-mtls-authz} and
 * let through on {@code tcp-mtls}. Any of these failing throws {@link IllegalStateException}.
 *
 * <pre>{@code
 * Peer mtls = MutualTlsPeer.connect(MutualTlsPeer.PLAIN, MutualTlsPeer.parse(server.get(MutualTlsPeer.PLAIN)), identities);
 * Object back = mtls.roundTrip(Payload.of(Workload.DOUBLES, 10));
 * }</pre>
 */
final class MutualTlsPeer implements Peer {
    /** tcp over TCP with mutual TLS. */
    static final String PLAIN = "tcp-mtls";
    /** {@link #PLAIN} with the 20-rule policy of {@link SecuredEchoServers#POLICY_RESOURCE}. */
    static final String AUTHZ = "tcp-mtls-authz";
    private static final String TCP = "tcp";
    private static final CallOptions PINNED = CallOptions.DEFAULT.with(MetaStub.PROTOCOL, TCP);

    /**
     * Who calls: {@code caller} the identity the policy's last allow rule names, {@code other} a
     * trusted identity no rule allows, {@code anonymous} a client that trusts the server but has no key.
     */
    record Identities(TlsSettings caller, TlsSettings other, TlsSettings anonymous) {
    }

    private final String name;
    private final List<Endpoint> endpoints;
    /** The tcp one of {@link #endpoints}. */
    private final Endpoint endpoint;
    private final ClientSettings settings;
    private final MetaStub channel;
    private final EchoStub echo;
    private MetaStub countedChannel;
    private CountingProxy proxy;
    private EchoStub counted;

    private MutualTlsPeer(String name, List<Endpoint> endpoints, Endpoint endpoint, ClientSettings settings, MetaStub channel) {
        this.name = name;
        this.endpoints = List.copyOf(endpoints);
        this.endpoint = endpoint;
        this.settings = settings;
        this.channel = channel;
        this.echo = EchoComponent.stub(channel).withOptions(PINNED);
    }

    /** Whether {@code name} is one of these rows. */
    static boolean isRow(String name) {
        return name.equals(PLAIN) || name.equals(AUTHZ);
    }

    /** {@code endpoints} as one word for the bench server's ready line: {@code tcp:tcps://...,soap:https://...}. */
    static String format(List<Endpoint> endpoints) {
        return endpoints.stream().map(e -> e.protocol() + ":" + e.address()).collect(Collectors.joining(","));
    }

    /** The endpoints of a {@link #format}ted word. */
    static List<Endpoint> parse(String word) {
        return Arrays.stream(word.split(",")).map(e -> {
            int colon = e.indexOf(':');
            return new Endpoint(e.substring(0, colon), e.substring(colon + 1));
        }).collect(Collectors.toList());
    }

    /**
     * The row {@code name} on a server's {@code endpoints} (SOAP, which every meta-stub needs,
     * and tcp, where every call is pinned), its wiring checked (see the class comment).
     */
    static MutualTlsPeer connect(String name, List<Endpoint> endpoints, Identities who) {
        if (!isRow(name)) {
            throw new IllegalArgumentException(name + " is not " + PLAIN + " or " + AUTHZ);
        }
        Endpoint endpoint = endpoints.stream().filter(e -> e.protocol().equals(TCP)).findFirst()
                .orElseThrow(() -> new IllegalStateException(name + ": the server has no tcp endpoint: " + endpoints));
        if (!"tcps".equals(URI.create(endpoint.address()).getScheme())) {
            throw new IllegalStateException(name + ": the server's endpoint is not tcp over TLS: " + endpoint);
        }
        ClientSettings settings = ClientSettings.defaults().withMaxMessageBytes(BenchServer.MAX_MESSAGE_BYTES)
                .withCallTimeout(Duration.ofMillis(Sweep.CALL_TIMEOUT_MILLIS));
        AtomicReference<CallRecord> first = new AtomicReference<>();
        MetaStub channel = channel(endpoints, settings.withTls(who.caller()), r -> first.compareAndSet(null, r));
        MutualTlsPeer peer = new MutualTlsPeer(name, endpoints, endpoint, settings.withTls(who.caller()), channel);
        try {
            peer.echo.empty();
            CallRecord r = first.get();
            // only the first call is looked at: the listener runs on every timed call too, where it must cost nothing
            if (r == null || !TCP.equals(r.protocol()) || !TCP.equals(r.via()) || !r.address().startsWith("tcps://")) {
                throw new IllegalStateException(name + ": the first call did not go over tcp with TLS: " + r);
            }
            peer.expectRefused(who.anonymous(), "a client without a certificate");
            boolean policy = name.equals(AUTHZ);
            if (policy) {
                peer.expectRefused(who.other(), "an identity the policy does not allow");
            } else {
                peer.expectAnswered(who.other(), "another trusted identity, with no policy");
            }
            return peer;
        } catch (RuntimeException | Error e) {
            peer.close();
            throw e;
        }
    }

    private static MetaStub channel(List<Endpoint> endpoints, ClientSettings settings, io.switchboard.metastub.CallListener listener) {
        MetaStub.Builder b = MetaStub.builder(EchoComponent.DESCRIPTOR).endpoints(endpoints).settings(settings)
                .serverRecognisesCallIds(true);   // SecuredEchoServers checks that its servers do
        return (listener == null ? b : b.listener(listener)).build();
    }

    /** A call as {@code tls} must be refused: a handshake failure, or a denial when {@code tls} is trusted. */
    private void expectRefused(TlsSettings tls, String who) {
        try (MetaStub other = channel(endpoints, settings.withTls(tls), null)) {
            try {
                EchoComponent.stub(other).withOptions(PINNED).empty();
            } catch (PermissionDeniedException e) {
                return;
            } catch (RuntimeException e) {
                if (tls.hasKey()) {
                    throw new IllegalStateException(name + ": " + who + " should be denied by the policy, not " + e, e);
                }
                return;   // no certificate: the server ends the handshake, which the client sees as a transport failure
            }
            throw new IllegalStateException(name + ": " + who + " was answered");
        }
    }

    private void expectAnswered(TlsSettings tls, String who) {
        try (MetaStub other = channel(endpoints, settings.withTls(tls), null)) {
            EchoComponent.stub(other).withOptions(PINNED).empty();
        } catch (RuntimeException e) {
            throw new IllegalStateException(name + ": " + who + " was refused: " + e, e);
        }
    }

    @Override
    public String name() {
        return name;
    }

    @Override
    public boolean marksCalls() {
        return true;   // the meta-stub's PhaseMarkInterceptor
    }

    @Override
    public Object roundTrip(Payload p) {
        return SwitchboardPeer.call(echo, p);
    }

    /** Bytes on the wire, TLS records included, counted through a relay to the same server. */
    @Override
    public synchronized long requestBytes(Payload p) throws Exception {
        if (counted == null) {
            URI uri = URI.create(endpoint.address());
            proxy = new CountingProxy(uri.getPort());
            // the relay listens on loopback, as the server does: the certificate's 127.0.0.1 still matches
            URI relayed = new URI(uri.getScheme(), null, uri.getHost(), proxy.port(), uri.getPath(), null, null);
            List<Endpoint> viaRelay = new ArrayList<>(endpoints);
            viaRelay.replaceAll(e -> e == endpoint ? new Endpoint(TCP, relayed.toString()) : e);
            countedChannel = channel(viaRelay, settings, null);
            counted = EchoComponent.stub(countedChannel).withOptions(PINNED);
        }
        SwitchboardPeer.call(counted, p);   // the first call through the relay makes the connection and its handshake
        long before = proxy.upstreamBytes();
        SwitchboardPeer.call(counted, p);
        return proxy.upstreamBytes() - before;
    }

    /** The stub the timed calls use, for the async workload. */
    EchoStub stub() {
        return echo;
    }

    @Override
    public synchronized void close() {
        channel.close();
        if (countedChannel != null) {
            countedChannel.close();
        }
        if (proxy != null) {
            proxy.close();
        }
    }
}
