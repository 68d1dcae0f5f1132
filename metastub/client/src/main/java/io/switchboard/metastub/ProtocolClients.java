package io.switchboard.metastub;

import io.switchboard.protocol.ClientSettings;
import io.switchboard.protocol.spi.ProtocolClient;
import io.switchboard.protocol.spi.Protocols;
import java.util.Map;
import java.util.Objects;
import java.util.concurrent.ConcurrentHashMap;

/**
 * One {@link ProtocolClient} per protocol, made with one {@link ClientSettings} when first needed,
 * for the meta-stubs that share it: a gRPC client (one HTTP/2 channel per server address) and a
 * SOAP client (one HTTP connection pool) serve them all. A {@code Switchboard} keeps one for every
 * meta-stub it builds and closes it when it closes; a meta-stub built without one
 * ({@link MetaStub.Builder#clients} not called) makes its own and closes it with itself. Closing a
 * meta-stub never closes shared clients.
 *
 * <pre>{@code
 * try (ProtocolClients clients = new ProtocolClients(ClientSettings.defaults())) {
 *     MetaStub echo = MetaStub.builder(EchoComponent.DESCRIPTOR).clients(clients).endpoints(echoEntry.endpoints()).build();
 *     MetaStub matrix = MetaStub.builder(MatrixComponent.DESCRIPTOR).clients(clients).endpoints(matrixEntry.endpoints()).build();
 * }
 * }</pre>
 */
public final class ProtocolClients implements AutoCloseable {
    private final ClientSettings settings;
    private final Map<String, ProtocolClient> clients = new ConcurrentHashMap<>();
    private volatile boolean closed;

    public ProtocolClients(ClientSettings settings) {
        this.settings = Objects.requireNonNull(settings, "settings");
    }

    /** The settings every client is made with (and the meta-stubs read their default timeout from). */
    public ClientSettings settings() {
        return settings;
    }

    /**
     * The client of {@code protocol}, made now if this is the first call for it.
     *
     * @throws IllegalStateException these clients are closed
     */
    public ProtocolClient get(String protocol) {
        if (closed) {
            throw new IllegalStateException("the protocol clients are closed");
        }
        ProtocolClient c = clients.computeIfAbsent(protocol, name -> Protocols.get(name).newClient(settings));
        if (closed) {   // closed meanwhile: this one may have been made after close() went through the map
            close();
            throw new IllegalStateException("the protocol clients are closed");
        }
        return c;
    }

    /** Closes every client made so far: the transports made from them fail from then on. */
    @Override
    public void close() {
        closed = true;
        for (String protocol : clients.keySet()) {
            ProtocolClient c = clients.remove(protocol);
            if (c != null) {
                c.close();
            }
        }
    }

    @Override
    public String toString() {
        return "ProtocolClients" + clients.keySet() + (closed ? " (closed)" : "");
    }
}
