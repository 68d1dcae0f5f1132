package io.switchboard.protocol.grpc;

import io.switchboard.codec.message.MessageLimits;
import io.switchboard.idl.runtime.ServiceDescriptor;
import io.switchboard.protocol.ClientSettings;
import io.switchboard.protocol.Endpoint;
import io.switchboard.protocol.spi.Endpoints;
import java.net.URI;
import java.util.Map;
import io.switchboard.protocol.spi.ProtocolClient;
import io.switchboard.protocol.spi.ProtocolProvider;
import io.switchboard.protocol.spi.ProtocolServer;
import io.switchboard.protocol.ServerSettings;

/**
 * The bulk protocol: each component is the gRPC service its typed {@code .proto} declares, every
 * value ordinary protobuf (packed arrays copied in bulk, linked structures as a node table), unary
 * for bounded messages and streamed in parts whose merge is the message otherwise; so other
 * languages call it with their own generated code (docs/grpc-wire.md).
 *
 * <pre>{@code
 * ProtocolServer server = Protocols.get("grpc").newServer(ServerSettings.defaults());
 * Endpoint endpoint = server.export(EchoComponent.skeleton(new EchoService()));
 * // endpoint.address() is grpc://127.0.0.1:PORT/Echo, or grpcs://... with ServerSettings.withTls
 * Transport t = Protocols.get("grpc").newClient(ClientSettings.defaults()).connect(EchoComponent.DESCRIPTOR, endpoint);
 * double[] back = EchoComponent.stub(t).echoDoubles(new double[10_000_000]);
 * }</pre>
 */
public final class GrpcProtocolProvider implements ProtocolProvider {
    public static final String NAME = "grpc";
    /**
     * Largest part (one gRPC message) a server accepts by default, in bytes: gRPC's own default
     * message limit. Switchboard sends parts of about 1 MiB; a larger one ends the call with
     * RESOURCE_EXHAUSTED.
     */
    public static final int DEFAULT_MAX_PART_BYTES = 4 << 20;

    /** The former name of {@link #DEFAULT_MAX_PART_BYTES}, from when parts were called chunks. */
    @Deprecated(since = "0.1.0", forRemoval = true)
    public static final int DEFAULT_MAX_CHUNK_BYTES = DEFAULT_MAX_PART_BYTES;

    @Override
    public String name() {
        return NAME;
    }

    @Override
    public ProtocolServer newServer(ServerSettings settings) {
        return newServer(settings, MessageLimits.of(settings.maxMessageBytes(), settings.maxGraphNodes()));
    }

    /** A server with explicit decoder limits, including the longest string or byte array accepted. */
    public ProtocolServer newServer(ServerSettings settings, MessageLimits limits) {
        return newServer(settings, limits, DEFAULT_MAX_PART_BYTES);
    }

    /** A server with explicit decoder limits and the largest part (data bytes of one gRPC message) it accepts. */
    public ProtocolServer newServer(ServerSettings settings, MessageLimits limits, int maxPartBytes) {
        return new GrpcServer(settings, limits, maxPartBytes);
    }

    @Override
    public ProtocolClient newClient(ClientSettings settings) {
        return new GrpcClient(settings);
    }

    /** {@code grpc://HOST:PORT/...} (plain text) or {@code grpcs://HOST:PORT/...} (TLS). */
    @Override
    public String checkAddress(String address) {
        String why = Endpoints.checkNetworkAddress(address);
        if (why == null && !GrpcTls.isEndpoint(URI.create(address))) {
            return "is not grpc://HOST:PORT/... or grpcs://HOST:PORT/...";
        }
        return why;
    }

    /** A {@code grpcs://} endpoint: TLS. */
    @Override
    public boolean protectedEndpoint(Endpoint endpoint) {
        return GrpcTls.TLS_SCHEME.equals(endpoint.uri().getScheme());
    }

        /** The interface's {@code .proto}, the contract a gRPC toolchain builds its client from. */
    @Override
    public Map<String, String> published(ServiceDescriptor descriptor, Endpoint endpoint) {
        String proto = descriptor.document(ServiceDescriptor.PROTO);
        return proto == null ? Map.of() : Map.of(ServiceDescriptor.PROTO, proto);
    }
}
