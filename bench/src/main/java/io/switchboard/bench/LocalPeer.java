package io.switchboard.bench;

import io.switchboard.components.echo.EchoComponent;
import io.switchboard.components.echo.EchoService;
import io.switchboard.components.echo.EchoStub;
import io.switchboard.metastub.MetaStub;
import io.switchboard.protocol.CallOptions;
import io.switchboard.protocol.ClientSettings;
import io.switchboard.protocol.Endpoint;
import io.switchboard.protocol.spi.ProtocolServer;
import io.switchboard.protocol.spi.Protocols;
import io.switchboard.protocol.ServerSettings;
import io.switchboard.metastub.CallRecord;
import io.switchboard.protocol.Skeleton;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.atomic.AtomicReference;

/**
 * The in-process row ({@code local}): the echo component served in the bench client's own JVM and
 * called through the generated stub over a meta-stub pinned to {@code local}, so every call copies
 * its request and its answer through the protobuf codec as the protocol does for any caller. It
 * necessarily runs in the client's JVM, unlike every other row; nothing goes on a wire.
 *
 * <pre>{@code
 * try (LocalPeer local = LocalPeer.start()) {
 *     Object back = local.roundTrip(Payload.of(Workload.DOUBLES, 1000));
 * }
 * }</pre>
 */
final class LocalPeer implements Peer {
    static final String NAME = "local";
    private static final String SOAP = "soap";

    private final List<ProtocolServer> servers;
    private final MetaStub channel;
    private final EchoStub stub;
    /** Calls that went over another protocol (the failsafe's SOAP): each makes the next round trip fail, named. */
    private final AtomicReference<String> elsewhere = new AtomicReference<>();

    private LocalPeer(List<ProtocolServer> servers, List<Endpoint> endpoints, ClientSettings settings) {
        this.servers = servers;
        this.channel = MetaStub.builder(EchoComponent.DESCRIPTOR).protocols(NAME, SOAP).endpoints(endpoints)
                .settings(settings).listener(this::record).build();
        this.stub = EchoComponent.stub(channel).withOptions(CallOptions.DEFAULT.with(MetaStub.PROTOCOL, NAME));
    }

    /**
     * Serves the echo component here over local and SOAP (a meta-stub needs SOAP on both sides, as for
     * any component a {@code ComponentServer} serves), and calls it over local only.
     */
    static LocalPeer start() {
        ServerSettings serverSettings = ServerSettings.defaults().withMaxMessageBytes(BenchServer.MAX_MESSAGE_BYTES);
        List<ProtocolServer> servers = new ArrayList<>();
        try {
            List<Endpoint> endpoints = new ArrayList<>();
            Skeleton echo = EchoComponent.skeleton(new EchoService());
            for (String protocol : List.of(NAME, SOAP)) {
                ProtocolServer server = Protocols.get(protocol).newServer(serverSettings);
                servers.add(server);
                endpoints.add(server.export(echo));
            }
            ClientSettings settings = ClientSettings.defaults().withMaxMessageBytes(BenchServer.MAX_MESSAGE_BYTES)
                    .withCallTimeout(Duration.ofMillis(Sweep.CALL_TIMEOUT_MILLIS));
            return new LocalPeer(servers, endpoints, settings);
        } catch (RuntimeException e) {
            servers.forEach(ProtocolServer::close);
            throw e;
        }
    }

    private void record(CallRecord call) {
        if (!NAME.equals(call.protocol())) {
            elsewhere.compareAndSet(null, call.operation() + " went over " + call.protocol() + ", not local");
        }
    }

    @Override
    public boolean marksCalls() {
        return true;   // the meta-stub's PhaseMarkInterceptor
    }

    @Override
    public String name() {
        return NAME;
    }

    /** The pinned stub, for the async workload. */
    EchoStub stub() {
        return stub;
    }

    @Override
    public Object roundTrip(Payload p) throws Failure {
        Object back = SwitchboardPeer.call(stub, p);
        String wrongProtocol = elsewhere.get();
        if (wrongProtocol != null) {
            throw new Failure(wrongProtocol);
        }
        return back;
    }

    /** Why a call did not go over local, or null when every call so far did. */
    String wrongProtocol() {
        return elsewhere.get();
    }

    /** Nothing crosses a socket in process. */
    @Override
    public long requestBytes(Payload payload) {
        return -1;
    }

    @Override
    public void close() {
        channel.close();
        servers.forEach(ProtocolServer::close);
    }
}
