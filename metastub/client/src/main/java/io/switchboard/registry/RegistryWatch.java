package io.switchboard.registry;

import java.time.Duration;
import java.util.ArrayList;
import java.util.Collection;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.function.Consumer;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Tells a listener when instances of some names (or of every name) appear, change or go. A daemon
 * thread long-polls the registry's {@code watch} operation; the listener runs on that thread, one
 * event at a time, in the registry's order.
 *
 * <p>It first reports every instance bound now as {@link RegistryEvent.Kind#APPEAR}, then the
 * changes. It keeps its own view of the instances, so whatever happens between polls — the
 * registry restarted, another registry server answers, changes fell out of the registry's buffer
 * — it looks the names up again and reports the difference: the listener's picture is always
 * the registry's, and each change is reported once. While the registry cannot be reached it
 * retries (back-off up to 5 s) and reports nothing. Over several registries a poll waits at most
 * {@value RegistryClient#FAILOVER_WATCH_SECONDS} s, and its answer at most 5 s more (the call
 * timeout when shorter): a registry that is cut off, and so answers nothing, is left for the next
 * within that time.
 *
 * <pre>{@code
 * try (RegistryWatch watch = RegistryWatch.start(registry, List.of("Echo"), e -> log.info("{}", e))) {
 *     ...
 * }
 * }</pre>
 */
public final class RegistryWatch implements AutoCloseable {
    private static final Logger LOG = LoggerFactory.getLogger(RegistryWatch.class);
    /** An answer without changes sooner than this means the registry did not wait (it is busy): pause. */
    private static final long MIN_EMPTY_POLL_NANOS = Duration.ofSeconds(1).toNanos();

    private record Key(String name, String instanceId) {
    }

    private final RegistryClient registry;
    private final Set<String> names;
    private final Consumer<RegistryEvent> listener;
    private final Map<Key, ComponentEntry> known = new HashMap<>();
    private final CountDownLatch synced = new CountDownLatch(1);
    private final Thread thread;
    private volatile boolean closed;

    private RegistryWatch(RegistryClient registry, Collection<String> names, Consumer<RegistryEvent> listener) {
        this.registry = registry;
        this.names = Set.copyOf(names);
        this.listener = listener;
        this.thread = new Thread(this::run, "registry-watch-" + (names.isEmpty() ? "*" : String.join(",", names)));
        thread.setDaemon(true);
    }

    /**
     * Starts watching {@code names} (every name when empty) through {@code registry}, which must
     * stay open while the watch runs.
     */
    public static RegistryWatch start(RegistryClient registry, Collection<String> names,
                                      Consumer<RegistryEvent> listener) {
        RegistryWatch w = new RegistryWatch(registry, names, listener);
        w.thread.start();
        return w;
    }

    /** Waits until the instances bound at the start have been reported; false if that took longer than {@code timeout}. */
    public boolean awaitSynced(Duration timeout) throws InterruptedException {
        return synced.await(timeout.toMillis(), TimeUnit.MILLISECONDS);
    }

    private void run() {
        String epoch = null;
        Long since = null;
        long backoff = 200;
        while (!closed) {
            long started = System.nanoTime();
            try {
                RegistryClient.WatchResult r = registry.watch(names, epoch, since, registry.watchWaitSeconds());
                if (closed) {
                    return;
                }
                if (r.reset()) {
                    resync();
                } else {
                    r.events().forEach(this::apply);
                }
                epoch = r.epoch();
                since = r.version();
                backoff = 200;
                synced.countDown();
                if (!r.reset() && r.events().isEmpty()) {
                    long early = MIN_EMPTY_POLL_NANOS - (System.nanoTime() - started);
                    if (early > 0) {
                        Thread.sleep(early / 1_000_000);
                    }
                }
            } catch (InterruptedException e) {
                return;
            } catch (RuntimeException e) {
                if (closed) {
                    return;
                }
                LOG.warn("watching {} at {}: {}; trying again in {} ms", names.isEmpty() ? "every name" : names,
                        registry.url(), e.getMessage(), backoff);
                try {
                    Thread.sleep(backoff);
                } catch (InterruptedException ie) {
                    return;
                }
                backoff = Math.min(5_000, backoff * 2);
            }
        }
    }

    /** Looks everything up again and reports the difference to what the listener was told. */
    private void resync() {
        List<ComponentEntry> now = new ArrayList<>();
        if (names.isEmpty()) {
            now.addAll(registry.list());
        } else {
            for (String n : names) {
                registry.lookup(n).forEach(e -> now.add(e.withoutSchema()));
            }
        }
        Map<Key, ComponentEntry> seen = new HashMap<>();
        now.forEach(e -> seen.put(new Key(e.name(), e.instanceId()), e));
        for (Key k : new ArrayList<>(known.keySet())) {
            if (!seen.containsKey(k)) {
                gone(k);
            }
        }
        now.forEach(this::bound);
    }

    private void apply(RegistryEvent e) {
        if (e.kind() == RegistryEvent.Kind.GO) {
            gone(new Key(e.name(), e.instanceId()));
        } else {
            bound(e.entry());
        }
    }

    private void bound(ComponentEntry e) {
        ComponentEntry before = known.put(new Key(e.name(), e.instanceId()), e);
        if (before == null) {
            tell(new RegistryEvent(RegistryEvent.Kind.APPEAR, e.name(), e.instanceId(), e));
        } else if (!before.equals(e)) {
            tell(new RegistryEvent(RegistryEvent.Kind.CHANGE, e.name(), e.instanceId(), e));
        }
    }

    private void gone(Key k) {
        ComponentEntry before = known.remove(k);
        if (before != null) {
            tell(new RegistryEvent(RegistryEvent.Kind.GO, k.name(), k.instanceId(), before));
        }
    }

    private void tell(RegistryEvent e) {
        if (closed) {
            return;
        }
        try {
            listener.accept(e);
        } catch (RuntimeException ex) {
            LOG.warn("registry watch listener failed on {}: {}", e, ex.toString());
        }
    }

    /** Stops reporting at once; the thread ends when its poll returns (at most the registry's wait). */
    @Override
    public void close() {
        closed = true;
        thread.interrupt();
    }
}
