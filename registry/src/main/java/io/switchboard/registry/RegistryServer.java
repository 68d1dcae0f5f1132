package io.switchboard.registry;

import io.switchboard.protocol.Endpoint;
import io.switchboard.protocol.ProtocolServer;
import io.switchboard.protocol.Protocols;
import io.switchboard.protocol.ServerSettings;
import io.switchboard.registry.wire.RegistryComponent;
import java.time.Clock;
import java.util.Objects;

/**
 * The registry served over SOAP at {@code http://HOST:PORT/axis2/services/Registry}.
 *
 * <pre>{@code
 * try (RegistryServer registry = RegistryServer.builder().port(8081).secret("s3cret").start()) {
 *     System.out.println(registry.endpoint());        // give this URL to servers and clients
 * }
 * }</pre>
 */
public final class RegistryServer implements AutoCloseable {
    /** The port the standalone registry listens on unless told otherwise. */
    public static final int DEFAULT_PORT = 8081;

    private final ProtocolServer soap;
    private final RegistryService service;
    private final Endpoint endpoint;

    private RegistryServer(Builder b) {
        this.service = new RegistryService(b.store, b.secret, Clock.systemUTC());
        this.soap = Protocols.get("soap").newServer(b.settings);
        try {
            this.endpoint = soap.export(RegistryComponent.skeleton(service));
        } catch (RuntimeException e) {
            soap.close();
            throw e;
        }
    }

    public static Builder builder() {
        return new Builder();
    }

    /** The registry's SOAP endpoint URL, as clients and servers pass it around. */
    public String endpoint() {
        return endpoint.address();
    }

    public String wsdlUrl() {
        return endpoint.address() + "?wsdl";
    }

    public RegistryStore store() {
        return service.store();
    }

    @Override
    public void close() {
        soap.close();
        service.store().close();
    }

    /** Configures a {@link RegistryServer}. Defaults: loopback, an ephemeral port, in-memory store, open writes. */
    public static final class Builder {
        private ServerSettings settings = ServerSettings.defaults().withMaxMessageBytes(4L << 20);
        private RegistryStore store = new InMemoryRegistryStore();
        private String secret;

        public Builder port(int port) {
            settings = settings.withPort(port);
            return this;
        }

        public Builder bindAddress(String address) {
            settings = settings.withBindAddress(address);
            return this;
        }

        public Builder settings(ServerSettings serverSettings) {
            settings = Objects.requireNonNull(serverSettings);
            return this;
        }

        public Builder store(RegistryStore registryStore) {
            store = Objects.requireNonNull(registryStore);
            return this;
        }

        /** The shared secret that bind, rebind and unbind must carry; null leaves writes open. */
        public Builder secret(String sharedSecret) {
            secret = sharedSecret;
            return this;
        }

        public RegistryServer start() {
            return new RegistryServer(this);
        }
    }
}
