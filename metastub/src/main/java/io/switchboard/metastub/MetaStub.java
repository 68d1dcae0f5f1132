package io.switchboard.metastub;

import io.switchboard.idl.runtime.DeclaredFault;
import io.switchboard.idl.runtime.OperationDescriptor;
import io.switchboard.idl.runtime.ServiceDescriptor;
import io.switchboard.protocol.CallOptions;
import io.switchboard.protocol.Channel;
import io.switchboard.protocol.ClientSettings;
import io.switchboard.protocol.Endpoint;
import io.switchboard.protocol.ProtocolClient;
import io.switchboard.protocol.Protocols;
import io.switchboard.protocol.Transport;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * A channel that chooses the protocol of every call among those client and server share. Give it
 * to a generated stub: the stub stays the same whatever protocol carries each call.
 *
 * <p>Which policy decides, from the most specific to the least: a protocol pinned on the call
 * ({@link #PROTOCOL}), a policy set on the call ({@link #POLICY}), a policy set for the operation,
 * the stub's policy.
 *
 * <pre>{@code
 * MetaStub channel = MetaStub.builder(EchoComponent.DESCRIPTOR)
 *         .protocols("grpc", "soap")
 *         .endpoints(entry.endpoints())
 *         .policy(new FirstCommonPolicy())
 *         .build();
 * EchoStub echo = EchoComponent.stub(channel);
 * echo.withOptions(CallOptions.DEFAULT.with(MetaStub.PROTOCOL, "soap")).empty();
 * }</pre>
 */
public final class MetaStub implements Channel, AutoCloseable {
    /** Pins the protocol of one call (or of a stub, through {@code withOptions}). */
    public static final CallOptions.Key<String> PROTOCOL = CallOptions.Key.of("switchboard.protocol", null);
    /** Sets the selection policy of one call (or of a stub, through {@code withOptions}). */
    public static final CallOptions.Key<SelectionPolicy> POLICY = CallOptions.Key.of("switchboard.policy", null);

    private static final Logger LOG = LoggerFactory.getLogger(MetaStub.class);

    private final ServiceDescriptor descriptor;
    private final ProtocolSuite suite;
    private final SelectionPolicy policy;
    private final Map<String, SelectionPolicy> operationPolicies = new ConcurrentHashMap<>();
    private final ClientSettings settings;
    private final Map<String, ProtocolClient> clients = new ConcurrentHashMap<>();
    private final Map<String, Transport> transports = new ConcurrentHashMap<>();
    private final List<CallListener> listeners = new CopyOnWriteArrayList<>();
    private volatile boolean closed;

    private MetaStub(Builder b) {
        this.descriptor = b.descriptor;
        this.suite = ProtocolSuite.of(b.protocols, b.endpoints);
        this.policy = b.policy;
        this.settings = b.settings;
        this.listeners.addAll(b.listeners);
    }

    public static Builder builder(ServiceDescriptor descriptor) {
        return new Builder(descriptor);
    }

    public ProtocolSuite suite() {
        return suite;
    }

    public SelectionPolicy policy() {
        return policy;
    }

    /** Sets the policy for one operation, over the stub's; null removes it. */
    public void setOperationPolicy(String operation, SelectionPolicy operationPolicy) {
        descriptor.operation(operation);
        if (operationPolicy == null) {
            operationPolicies.remove(operation);
        } else {
            operationPolicies.put(operation, operationPolicy);
        }
    }

    public void addListener(CallListener listener) {
        listeners.add(Objects.requireNonNull(listener));
    }

    @Override
    public Object call(OperationDescriptor operation, Object request, CallOptions options) throws DeclaredFault {
        if (closed) {
            throw new IllegalStateException("meta-stub for " + descriptor.name() + " is closed");
        }
        List<String> candidates = suite.candidates();
        String protocol;
        String reason;
        String pinned = options.get(PROTOCOL);
        if (pinned != null) {
            if (!candidates.contains(pinned)) {
                throw new NoCommonProtocolException("call pins " + pinned + ", which client and server do not share "
                        + candidates);
            }
            protocol = pinned;
            reason = "pinned on call";
        } else {
            SelectionPolicy chosen = options.get(POLICY);
            String level = "call";
            if (chosen == null) {
                chosen = operationPolicies.get(operation.name());
                level = "operation";
            }
            if (chosen == null) {
                chosen = policy;
                level = "stub";
            }
            protocol = chosen.select(operation, request, candidates);
            reason = chosen.name() + " (" + level + " policy)";
        }
        Transport transport = transport(protocol);
        long start = System.nanoTime();
        String error = null;
        try {
            return transport.call(operation, request, options);
        } catch (DeclaredFault f) {
            throw f;
        } catch (RuntimeException e) {
            error = e.getClass().getSimpleName() + ": " + e.getMessage();
            throw e;
        } finally {
            record(new CallRecord(descriptor.name(), operation.name(), protocol, reason,
                    Duration.ofNanos(System.nanoTime() - start), error));
        }
    }

    private void record(CallRecord r) {
        if (LOG.isDebugEnabled()) {
            LOG.debug("{}.{} over {} because {} in {} µs{}", r.component(), r.operation(), r.protocol(), r.reason(),
                    r.latency().toNanos() / 1000, r.error() == null ? "" : " failed: " + r.error());
        }
        for (CallListener l : listeners) {
            try {
                l.onCall(r);
            } catch (RuntimeException e) {
                LOG.warn("call listener {} failed: {}", l, e.toString());
            }
        }
    }

    private Transport transport(String protocol) {
        return transports.computeIfAbsent(protocol, p -> {
            ProtocolClient client = clients.computeIfAbsent(p, name -> Protocols.get(name).newClient(settings));
            Endpoint endpoint = suite.endpoint(p);
            return client.connect(descriptor, endpoint);
        });
    }

    @Override
    public void close() {
        closed = true;
        for (Transport t : transports.values()) {
            t.close();
        }
        for (ProtocolClient c : clients.values()) {
            c.close();
        }
        transports.clear();
        clients.clear();
    }

    /** Configures a {@link MetaStub}. Defaults: the client speaks every protocol on the class path, SOAP last. */
    public static final class Builder {
        private final ServiceDescriptor descriptor;
        private List<String> protocols;
        private List<Endpoint> endpoints = List.of();
        private SelectionPolicy policy = new FirstCommonPolicy();
        private ClientSettings settings = ClientSettings.defaults();
        private final List<CallListener> listeners = new ArrayList<>();

        private Builder(ServiceDescriptor descriptor) {
            this.descriptor = Objects.requireNonNull(descriptor, "descriptor");
            List<String> all = new ArrayList<>(Protocols.names());
            all.remove(ProtocolSuite.SOAP);
            all.add(ProtocolSuite.SOAP);
            this.protocols = all;
        }

        /** The client's protocols, most preferred first. */
        public Builder protocols(String... names) {
            this.protocols = List.of(names);
            return this;
        }

        public Builder protocols(List<String> names) {
            this.protocols = List.copyOf(names);
            return this;
        }

        /** The server's endpoints, as its registry entry lists them. */
        public Builder endpoints(List<Endpoint> serverEndpoints) {
            this.endpoints = List.copyOf(serverEndpoints);
            return this;
        }

        public Builder policy(SelectionPolicy stubPolicy) {
            this.policy = Objects.requireNonNull(stubPolicy);
            return this;
        }

        public Builder settings(ClientSettings clientSettings) {
            this.settings = Objects.requireNonNull(clientSettings);
            return this;
        }

        public Builder listener(CallListener listener) {
            this.listeners.add(Objects.requireNonNull(listener));
            return this;
        }

        public MetaStub build() {
            return new MetaStub(this);
        }
    }
}
