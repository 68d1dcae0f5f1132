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

    @Override
    void close();
}
