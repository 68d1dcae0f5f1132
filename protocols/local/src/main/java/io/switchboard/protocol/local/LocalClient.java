package io.switchboard.protocol.local;

import io.switchboard.idl.runtime.ServiceDescriptor;
import io.switchboard.protocol.Endpoint;
import io.switchboard.protocol.spi.ProtocolClient;
import io.switchboard.protocol.spi.Transport;

/** Makes local transports; holds nothing, so closing it only stops new calls. */
final class LocalClient implements ProtocolClient {
    /** Who this client's calls are, unless a call names its own caller; null: the default. */
    private final String callerName;
    private volatile boolean closed;

    LocalClient(String callerName) {
        this.callerName = callerName;
    }

    @Override
    public String protocol() {
        return LocalProtocolProvider.NAME;
    }

    @Override
    public Transport connect(ServiceDescriptor descriptor, Endpoint endpoint) {
        if (!LocalProtocolProvider.NAME.equals(endpoint.protocol())
                || LocalProtocolProvider.jvmIdOf(endpoint) == null) {
            throw new IllegalArgumentException("a local endpoint looks like local://JVM-ID/SERVER/Component, not "
                    + endpoint);
        }
        if (closed) {
            throw new IllegalStateException("local client is closed");
        }
        return new LocalTransport(this, descriptor, endpoint);
    }

    String callerName() {
        return callerName;
    }

    boolean closed() {
        return closed;
    }

    @Override
    public void close() {
        closed = true;
    }
}
