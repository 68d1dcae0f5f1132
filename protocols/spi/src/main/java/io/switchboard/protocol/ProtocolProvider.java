package io.switchboard.protocol;

/**
 * A protocol implementation, found through {@link java.util.ServiceLoader} and named by a short key
 * ({@code soap}, {@code grpc}, {@code local}). Register it in
 * {@code META-INF/services/io.switchboard.protocol.ProtocolProvider}.
 */
public interface ProtocolProvider {
    /** The key that names the protocol in configuration, registry entries and the command line. */
    String name();

    ProtocolServer newServer(ServerSettings settings);

    ProtocolClient newClient(ClientSettings settings);
}
