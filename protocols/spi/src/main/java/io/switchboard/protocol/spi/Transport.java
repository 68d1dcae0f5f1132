package io.switchboard.protocol.spi;

import io.switchboard.protocol.Channel;
import io.switchboard.protocol.Endpoint;
/**
 * A client's connection to one component over one protocol. Thread-safe: concurrent calls share it.
 *
 * <pre>{@code
 * try (Transport soap = Protocols.get("soap").newClient(ClientSettings.defaults())
 *         .connect(EchoComponent.DESCRIPTOR, endpoint)) {
 *     Echo echo = EchoComponent.stub(soap);
 * }
 * }</pre>
 */
public interface Transport extends Channel, AutoCloseable {
    String protocol();

    Endpoint endpoint();

    /**
     * How the calls reach the endpoint when the protocol has more than one way, as the call record
     * shows it: tcp and gRPC say {@code unix} when their connection is the server's Unix domain
     * socket on this host, {@code tcp} otherwise ({@link UnixSockets}). Null (the default): only
     * the endpoint's address; also before the first call.
     */
    default String via() {
        return null;
    }

    @Override
    void close();
}
