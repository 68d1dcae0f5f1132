package io.switchboard.registry;

import io.switchboard.protocol.Skeleton;

/**
 * A component a client exported for a server to call back (progress reports of a long call, for
 * example), made by {@link Switchboard#exportCallback}: served on ephemeral ports by a
 * {@link ComponentServer} of its own and bound in the registry under a generated, unique name
 * with a lease. Pass {@link #name()} to the server, which finds the callback in the registry like
 * any component ({@link Switchboard#callbackChannel}); nobody needs to know a port. Closing
 * unbinds the name, then stops the listeners; if the client dies instead, the lease runs out.
 *
 * <pre>{@code
 * try (ExportedCallback progress = sb.exportCallback(ProgressComponent.skeleton(
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
