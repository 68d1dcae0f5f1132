package io.switchboard.registry.testing;

import io.switchboard.client.Switchboard;
import io.switchboard.protocol.Skeleton;
import io.switchboard.registry.ComponentEntry;
import io.switchboard.registry.server.RegistryServer;
import io.switchboard.server.ComponentServer;
import java.util.ArrayList;
import java.util.List;
import java.util.function.UnaryOperator;

/**
 * A registry on a loopback port with an in-memory store and a shared secret, a component server
 * bound to it, and the clients a test makes, all closed together: the set-up that tests of
 * components repeat. Real sockets, real SOAP and gRPC.
 *
 * <pre>{@code
 * try (RunningRegistry r = RunningRegistry.start()) {
 *     r.serve(EchoComponent.skeleton(new EchoService()));
 *     Switchboard sb = r.connect(b -> b.protocols("grpc", "soap"));   // over the network
 *     Echo echo = sb.lookup(EchoComponent.DESCRIPTOR, EchoComponent::stub);
 * }
 * }</pre>
 */
public final class RunningRegistry implements AutoCloseable {
    /** The registry's shared secret: writes (binds) must carry it. */
    public static final String SECRET = "test-secret";

    private final RegistryServer registry;
    private final List<AutoCloseable> opened = new ArrayList<>();
    private ComponentServer components;

    private RunningRegistry(RegistryServer registry) {
        this.registry = registry;
    }

    /** Starts a registry on a free loopback port. */
    public static RunningRegistry start() {
        return new RunningRegistry(RegistryServer.builder().secret(SECRET).start());
    }

    /** The registry's SOAP endpoint, as clients and {@code ./switchboard} take it. */
    public String url() {
        return registry.endpoint();
    }

    public RegistryServer registry() {
        return registry;
    }

    /**
     * Serves {@code skeleton} on every protocol on the class path from one component server (made
     * on first use, with the registry's secret) and binds it under its own name.
     */
    public synchronized ComponentEntry serve(Skeleton skeleton) {
        return components().export(skeleton);
    }

    /** The component server {@link #serve} uses; close it to see its components leave. */
    public synchronized ComponentServer components() {
        if (components == null) {
            // a test fixture: closed at the end of a test, with no client left to move away
            components = ComponentServer.builder().registry(url(), SECRET)
                    .drain(java.time.Duration.ZERO, ComponentServer.DEFAULT_DRAIN_TIMEOUT).build();
        }
        return components;
    }

    /** A client of this registry, closed with it; {@code configure} adds to the builder (protocols, listeners). */
    public Switchboard connect(UnaryOperator<Switchboard.Builder> configure) {
        Switchboard sb = configure.apply(Switchboard.builder(url()).secret(SECRET)).connect();
        synchronized (this) {
            opened.add(sb);
        }
        return sb;
    }

    public Switchboard connect() {
        return connect(b -> b);
    }

    /** Closes the clients, then the component server (its components unbind), then the registry. */
    @Override
    public synchronized void close() {
        for (int i = opened.size() - 1; i >= 0; i--) {
            try {
                opened.get(i).close();
            } catch (Exception e) {
                // closing anyway
            }
        }
        if (components != null) {
            components.close();
        }
        registry.close();
    }
}
