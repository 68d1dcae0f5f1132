package io.switchboard.protocol.tcp;

import io.switchboard.idl.runtime.ServiceDescriptor;
import io.switchboard.protocol.ClientSettings;
import io.switchboard.protocol.Endpoint;
import io.switchboard.protocol.ServerSettings;
import io.switchboard.protocol.spi.Endpoints;
import io.switchboard.protocol.spi.ProtocolClient;
import io.switchboard.protocol.spi.ProtocolProvider;
import io.switchboard.protocol.spi.ProtocolServer;
import java.net.URI;
import java.util.Map;

/**
 * The lean binary protocol for small calls: Apache brpc's {@code baidu_std} over a plain TCP
 * connection (docs/tcp-wire.md). Each message is the typed protobuf of the component's
 * {@code .proto}, written by the same codecs as gRPC's, in one frame: a 12-byte {@code PRPC}
 * header, an {@code RpcMeta} (service and method, correlation id, call id, timeout, user fields
 * for the trace context and Switchboard's extensions, error code and text), then the message.
 * Calls are multiplexed on one connection per server and answered in any order. A brpc client
 * calls a component with its {@code .proto} alone.
 *
 * <p>Messages up to the frame limit ({@link TcpLimits#DEFAULT_MAX_FRAME_BYTES}, 4 MiB, or
 * {@code -Dswitchboard.tcp.maxFrameBytes}) travel over tcp; a larger one is refused before
 * anything is sent. Selection policies pick tcp on their own for small calls only, up to
 * {@link TcpLimits#policyMaxBytes()} of payload (2 MiB by default, half the frame limit; tcp was
 * faster than gRPC up to the frame limit), and leave bulk to gRPC, which streams it in parts
 * beside other calls; a call pinned to tcp ({@code MetaStub.PROTOCOL}) or under {@code fixed:tcp}
 * goes over it up to the frame limit.
 *
 * <pre>{@code
 * ProtocolServer server = Protocols.get("tcp").newServer(ServerSettings.defaults());
 * Endpoint endpoint = server.export(EchoComponent.skeleton(new EchoService()));
 * // endpoint.address() is tcp://127.0.0.1:PORT/Echo, or tcps://... with ServerSettings.withTls
 * Transport t = Protocols.get("tcp").newClient(ClientSettings.defaults()).connect(EchoComponent.DESCRIPTOR, endpoint);
 * double[] back = EchoComponent.stub(t).echoDoubles(new double[] {1, 2, 3});
 * }</pre>
 */
public final class TcpProtocolProvider implements ProtocolProvider {
    public static final String NAME = "tcp";

    private final TcpLimits limits;

    /** The provider found by name: {@link TcpLimits#defaults()}. */
    public TcpProtocolProvider() {
        this(TcpLimits.defaults());
    }

    public TcpProtocolProvider(TcpLimits limits) {
        this.limits = limits;
    }

    public TcpLimits limits() {
        return limits;
    }

    @Override
    public String name() {
        return NAME;
    }

    @Override
    public ProtocolServer newServer(ServerSettings settings) {
        return new TcpServer(settings, limits);
    }

    @Override
    public ProtocolClient newClient(ClientSettings settings) {
        return new TcpClient(settings, limits);
    }

    /** Policies pick tcp for small calls only: see the class comment. */
    @Override
    public long policyMaxBytes() {
        return limits.policyMaxBytes();
    }

    /** {@code tcp://HOST:PORT/...} (plain text) or {@code tcps://HOST:PORT/...} (TLS). */
    @Override
    public String checkAddress(String address) {
        String why = Endpoints.checkNetworkAddress(address);
        if (why == null && !TcpTls.isEndpoint(URI.create(address))) {
            return "is not tcp://HOST:PORT/... or tcps://HOST:PORT/...";
        }
        return why;
    }

    /** A {@code tcps://} endpoint: TLS. */
    @Override
    public boolean protectedEndpoint(Endpoint endpoint) {
        return TcpTls.TLS_SCHEME.equals(endpoint.uri().getScheme());
    }

    /** The interface's {@code .proto}: what a brpc client builds its message classes from. */
    @Override
    public Map<String, String> published(ServiceDescriptor descriptor, Endpoint endpoint) {
        String proto = descriptor.document(ServiceDescriptor.PROTO);
        return proto == null ? Map.of() : Map.of(ServiceDescriptor.PROTO, proto);
    }
}
