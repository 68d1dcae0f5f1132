package io.switchboard.registry;

import io.switchboard.idl.runtime.ServiceDescriptor;
import io.switchboard.metastub.CallListener;
import io.switchboard.metastub.AdaptivePolicy;
import io.switchboard.metastub.MetaStub;
import io.switchboard.metastub.SelectionPolicy;
import io.switchboard.protocol.Channel;
import io.switchboard.protocol.ClientSettings;
import java.util.ArrayList;
import java.util.List;
import java.util.Objects;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.function.Function;

/**
 * The client's entry point: looks components up in a registry and returns generated stubs over
 * meta-stubs, which pick the protocol of each call.
 *
 * <pre>{@code
 * try (Switchboard sb = Switchboard.connect("http://127.0.0.1:8081/axis2/services/Registry")) {
 *     EchoStub echo = sb.lookup(EchoComponent.DESCRIPTOR, EchoComponent::stub);
 *     double[] back = echo.echoDoubles(new double[] {1, 2, 3});
 * }
 * }</pre>
 */
public final class Switchboard implements AutoCloseable {
    private final RegistryClient registry;
    private final List<String> protocols;
    private final SelectionPolicy policy;
    private final ClientSettings settings;
    private final List<CallListener> listeners;
    private final List<MetaStub> channels = new CopyOnWriteArrayList<>();

    private Switchboard(Builder b) {
        this.registry = RegistryClient.connect(b.registryUrl);
        this.protocols = b.protocols;
        this.policy = b.policy;
        this.settings = b.settings;
        this.listeners = List.copyOf(b.listeners);
    }

    public static Switchboard connect(String registryUrl) {
        return builder(registryUrl).connect();
    }

    public static Builder builder(String registryUrl) {
        return new Builder(registryUrl);
    }

    public RegistryClient registry() {
        return registry;
    }

    /** A stub for the component bound under its own name. */
    public <T> T lookup(ServiceDescriptor descriptor, Function<Channel, T> stubFactory) {
        return lookup(descriptor.name(), descriptor, stubFactory);
    }

    /** A stub for the component bound under {@code name}. */
    public <T> T lookup(String name, ServiceDescriptor descriptor, Function<Channel, T> stubFactory) {
        return stubFactory.apply(channel(name, descriptor));
    }

    /** The meta-stub for the component bound under {@code name}, for per-operation settings and listeners. */
    public MetaStub channel(String name, ServiceDescriptor descriptor) {
        List<ComponentEntry> entries = registry.lookup(name);
        if (entries.isEmpty()) {
            throw new NotBoundException(name + " is not bound in the registry at " + registry.url());
        }
        ComponentEntry entry = entries.get(0);
        MetaStub.Builder b = MetaStub.builder(descriptor).endpoints(entry.endpoints()).policy(policy).settings(settings)
                .serverRecognisesCallIds(entry.has(ComponentEntry.CALL_IDS));
        if (protocols != null) {
            b.protocols(protocols);
        }
        listeners.forEach(b::listener);
        MetaStub channel = b.build();
        channels.add(channel);
        return channel;
    }

    @Override
    public void close() {
        channels.forEach(MetaStub::close);
        registry.close();
    }

    /** Nothing is bound under the name asked for. */
    public static final class NotBoundException extends RegistryException {
        public NotBoundException(String message) {
            super("not-bound", message);
        }
    }

    /** Configures a {@link Switchboard}. Defaults: every protocol on the class path, the adaptive policy. */
    public static final class Builder {
        private final String registryUrl;
        private List<String> protocols;
        private SelectionPolicy policy = new AdaptivePolicy();
        private ClientSettings settings = ClientSettings.defaults();
        private final List<CallListener> listeners = new ArrayList<>();

        private Builder(String registryUrl) {
            this.registryUrl = Objects.requireNonNull(registryUrl, "registryUrl");
        }

        /** The client's protocols, most preferred first. */
        public Builder protocols(String... names) {
            protocols = List.of(names);
            return this;
        }

        public Builder policy(SelectionPolicy stubPolicy) {
            policy = Objects.requireNonNull(stubPolicy);
            return this;
        }

        public Builder settings(ClientSettings clientSettings) {
            settings = Objects.requireNonNull(clientSettings);
            return this;
        }

        public Builder listener(CallListener listener) {
            listeners.add(Objects.requireNonNull(listener));
            return this;
        }

        public Switchboard connect() {
            return new Switchboard(this);
        }
    }
}
