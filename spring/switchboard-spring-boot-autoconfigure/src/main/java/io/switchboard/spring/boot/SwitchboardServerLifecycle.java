package io.switchboard.spring.boot;

import io.switchboard.protocol.DaemonThreads;
import io.switchboard.registry.ComponentEntry;
import io.switchboard.server.ComponentServer;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.function.Supplier;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.springframework.boot.context.event.ApplicationReadyEvent;
import org.springframework.context.ApplicationListener;
import org.springframework.context.SmartLifecycle;

/**
 * Serves the application's components: builds the component server and binds them when the
 * application is ready (so a caller never finds an instance whose beans are not all made), and on
 * shutdown unbinds and drains them in the phase of Boot's graceful shutdown, beside the web
 * server's, within {@code spring.lifecycle.timeout-per-shutdown-phase}.
 *
 * <pre>{@code
 * boolean ready = lifecycle.components().size() == 1 && !lifecycle.draining();
 * }</pre>
 */
public class SwitchboardServerLifecycle implements SmartLifecycle, ApplicationListener<ApplicationReadyEvent> {
    /** Boot's graceful shutdown phase ({@code WebServerGracefulShutdownLifecycle}): stopped before the web server. */
    public static final int PHASE = SmartLifecycle.DEFAULT_PHASE - 1024;
    private static final Logger LOG = LoggerFactory.getLogger(SwitchboardServerLifecycle.class);

    private final Supplier<ComponentServer.Builder> builder;
    private final Supplier<List<ComponentRegistration>> components;
    private final List<ComponentEntry> bound = new CopyOnWriteArrayList<>();
    private volatile boolean running;
    private volatile boolean draining;
    private ComponentServer server;

    /**
     * @param builder    the configured server builder, asked for once the application is ready
     * @param components what to serve, asked for then too
     */
    public SwitchboardServerLifecycle(Supplier<ComponentServer.Builder> builder,
            Supplier<List<ComponentRegistration>> components) {
        this.builder = builder;
        this.components = components;
    }

    @Override
    public void onApplicationEvent(ApplicationReadyEvent event) {
        serve();
    }

    /** Exports and binds every component; done once, when the application is ready. Nothing to serve: no server at all. */
    synchronized void serve() {
        if (server != null || !running) {
            return;
        }
        List<ComponentRegistration> toServe = components.get();
        if (toServe.isEmpty()) {
            return;
        }
        server = builder.get().build();
        try {
            for (ComponentRegistration c : toServe) {
                ComponentEntry entry = server.export(c.name(), c.skeleton());
                bound.add(entry);
                LOG.info("serving {} on {}", entry.name(), entry.endpoints());
            }
        } catch (RuntimeException e) {
            server.close();
            throw e;
        }
    }

    @Override
    public void start() {
        running = true;
    }

    @Override
    public void stop() {
        finishDrain(beginDrain());
    }

    /**
     * Drains on another thread, so that the web server's graceful shutdown in the same phase runs
     * beside it; the health turns DOWN before this returns.
     */
    @Override
    public void stop(Runnable callback) {
        ComponentServer toClose = beginDrain();
        if (toClose == null) {
            callback.run();
            return;
        }
        DaemonThreads.start(() -> {
            try {
                finishDrain(toClose);
            } finally {
                callback.run();
            }
        }, "switchboard-drain");
    }

    /** Marks the drain begun; the server to drain, null when nothing was served. */
    private synchronized ComponentServer beginDrain() {
        running = false;
        if (server != null) {
            draining = true;
        }
        return server;
    }

    private void finishDrain(ComponentServer toClose) {
        if (toClose == null) {
            return;
        }
        ComponentServer.Drained drained = toClose.drainAndClose();
        bound.clear();
        if (drained != null) {
            LOG.info("{}", drained);
        }
    }

    @Override
    public boolean isRunning() {
        return running;
    }

    @Override
    public int getPhase() {
        return PHASE;
    }

    /** The entries bound in the registry, empty before the application is ready and after the drain. */
    public List<ComponentEntry> components() {
        return List.copyOf(bound);
    }

    /** Whether shutdown has begun: the entries are being unbound and new calls refused. */
    public boolean draining() {
        return draining;
    }

    /** The server, null until the application is ready (or when it has nothing to serve). */
    public synchronized ComponentServer server() {
        return server;
    }
}
