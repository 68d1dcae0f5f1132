package io.switchboard.protocol.spi;

import io.switchboard.protocol.Endpoint;
import io.switchboard.idl.runtime.ServiceDescriptor;

/** The client side of one protocol: makes transports to endpoints. Holds shared resources (pools). */
public interface ProtocolClient extends AutoCloseable {
    String protocol();

    /** A transport to {@code endpoint}; cheap, connects lazily. */
    Transport connect(ServiceDescriptor descriptor, Endpoint endpoint);

    @Override
    void close();
}
