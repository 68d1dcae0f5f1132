package io.switchboard.registry;

import io.switchboard.metastub.MetaStub;
import io.switchboard.protocol.ClientSettings;
import io.switchboard.protocol.Endpoint;
import io.switchboard.registry.wire.BindFaultException;
import io.switchboard.registry.wire.RebindFaultException;
import io.switchboard.registry.wire.Registry;
import io.switchboard.registry.wire.RegistryComponent;
import io.switchboard.registry.wire.RenewFaultException;
import io.switchboard.registry.wire.UnbindFaultException;
import java.net.URI;
import java.time.Duration;
import java.util.List;

/**
 * Talks to a registry: the generated registry stub over SOAP, with plain Java types.
 *
 * <pre>{@code
 * try (RegistryClient registry = RegistryClient.connect("http://127.0.0.1:8081/axis2/services/Registry", secret)) {
 *     List<ComponentEntry> echoes = registry.lookup("Echo");
 * }
 * }</pre>
 */
public final class RegistryClient implements AutoCloseable {
    private final MetaStub channel;
    private final Registry stub;
    private final String credential;
    private final String url;

    private RegistryClient(String url, String credential) {
        URI uri = URI.create(url);
        if (!"http".equals(uri.getScheme()) && !"https".equals(uri.getScheme())) {
            throw new IllegalArgumentException("a registry URL is the registry's SOAP endpoint (http://HOST:PORT/axis2/"
                    + "services/Registry), not " + url);
        }
        this.url = url;
        this.credential = credential;
        this.channel = MetaStub.builder(RegistryComponent.DESCRIPTOR).protocols("soap")
                .endpoints(List.of(new Endpoint("soap", url)))
                .settings(ClientSettings.defaults().withCallTimeout(Duration.ofSeconds(30)))
                .build();
        this.stub = RegistryComponent.stub(channel);
    }

    /** A client for reads only, or for writes to a registry that takes them without a credential. */
    public static RegistryClient connect(String url) {
        return new RegistryClient(url, null);
    }

    /** A client whose writes carry {@code credential}, the registry's shared secret. */
    public static RegistryClient connect(String url, String credential) {
        return new RegistryClient(url, credential);
    }

    public String url() {
        return url;
    }

    public void bind(ComponentEntry entry) {
        try {
            stub.bind(Entries.toWire(entry), credential);
        } catch (BindFaultException e) {
            throw new RegistryException(e.getFaultInfo().getCode(), "bind " + entry.name() + ": "
                    + e.getFaultInfo().getReason());
        }
    }

    public void rebind(ComponentEntry entry) {
        try {
            stub.rebind(Entries.toWire(entry), credential);
        } catch (RebindFaultException e) {
            throw new RegistryException(e.getFaultInfo().getCode(), "rebind " + entry.name() + ": "
                    + e.getFaultInfo().getReason());
        }
    }

    /** Removes one instance, or every instance of {@code name} when {@code instanceId} is null. */
    public int unbind(String name, String instanceId) {
        try {
            return stub.unbind(name, instanceId, credential);
        } catch (UnbindFaultException e) {
            throw new RegistryException(e.getFaultInfo().getCode(), "unbind " + name + ": "
                    + e.getFaultInfo().getReason());
        }
    }

    /**
     * Extends the lease of one instance; false when the registry no longer holds it (bind it
     * again). {@link ComponentServer} calls this on its heartbeat.
     */
    public boolean renew(String name, String instanceId) {
        try {
            return stub.renew(name, instanceId, credential);
        } catch (RenewFaultException e) {
            throw new RegistryException(e.getFaultInfo().getCode(), "renew " + name + ": "
                    + e.getFaultInfo().getReason());
        }
    }

    /** Every instance bound under {@code name}; empty if none. */
    public List<ComponentEntry> lookup(String name) {
        return Entries.fromWire(stub.lookup(name));
    }

    /** Every entry, without interface schemas. */
    public List<ComponentEntry> list() {
        return Entries.fromWire(stub.listEntries());
    }

    @Override
    public void close() {
        channel.close();
    }
}
