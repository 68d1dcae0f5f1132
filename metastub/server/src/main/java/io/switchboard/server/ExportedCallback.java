package io.switchboard.server;

import io.switchboard.client.Switchboard;
import io.switchboard.protocol.Skeleton;
import io.switchboard.registry.ComponentEntry;
import java.util.UUID;

/**
 * A component a client exported for a server to call back (progress reports of a long call, for
 * example), made by {@link #export}: served on ephemeral ports by a
 * {@link ComponentServer} of its own and bound in the registry under a generated, unique name
 * with a lease. Pass {@link #name()} to the server, which finds the callback in the registry like
 * any component ({@link Switchboard#callbackChannel}); nobody needs to know a port. Closing
 * unbinds the name, then stops the listeners; if the client dies instead, the lease runs out.
 *
 * <pre>{@code
 * try (ExportedCallback progress = ExportedCallback.export(sb, ProgressComponent.skeleton(
 *         (done, total, time, state) -> System.out.println(done + " of " + total)))) {
 *     double[] course = simulator.simulateWithProgress(parameters, initial, times, progress.name(), 10);
 * }   // unbound here
 * }</pre>
 */
public final class ExportedCallback implements AutoCloseable {
    private final ComponentServer server;
    private final ComponentEntry entry;
    private final java.util.function.Consumer<ExportedCallback> onClose;

    ExportedCallback(ComponentServer server, String name, Skeleton skeleton,
                     java.util.function.Consumer<ExportedCallback> onClose) {
        this.server = server;
        this.onClose = onClose;
        ComponentEntry bound;
        try {
            bound = server.export(name, skeleton);
        } catch (RuntimeException e) {
            server.close();
            throw e;
        }
        this.entry = bound;
    }

    /**
     * Exports {@code skeleton} as a callback of {@code sb}'s client: served on ephemeral ports
     * (the builder's {@link Switchboard.Builder#callbacks callback settings}) by a component
     * server of its own, bound in {@code sb}'s registry under a new unique name ({@code
     * <component>-callback-<uuid>}) with a lease. Hand {@link #name()} to the server you call;
     * close the callback when the conversation is over (closing {@code sb} closes it too).
     * Binding needs the registry's shared secret when it has one ({@link Switchboard.Builder#secret}).
     */
    public static ExportedCallback export(Switchboard sb, Skeleton skeleton) {
        ComponentServer server = ComponentServer.builder().settings(sb.callbackSettings()).lease(sb.callbackLease())
                .registry(sb.registry()).build();
        String name = skeleton.descriptor().name() + "-callback-" + UUID.randomUUID();
        return sb.closeWith(new ExportedCallback(server, name, skeleton, sb::forget));
    }

    /** The registry name the callback is bound under: what a server needs to call it. */
    public String name() {
        return entry.name();
    }

    /** The registry entry: endpoints on every protocol, the lease. */
    public ComponentEntry entry() {
        return entry;
    }

    /** Unbinds the name, then stops serving. Safe to call twice. */
    @Override
    public void close() {
        server.close();
        onClose.accept(this);
    }

    @Override
    public String toString() {
        return "ExportedCallback[" + name() + " at " + entry.endpoints() + "]";
    }
}
