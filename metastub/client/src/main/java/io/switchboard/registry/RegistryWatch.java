package io.switchboard.registry;

import io.grpc.ClientCall;
import io.grpc.ManagedChannel;
import io.grpc.Metadata;
import io.grpc.Status;
import io.switchboard.protocol.DaemonThreads;
import io.switchboard.protocol.PermissionDeniedException;
import io.switchboard.protocol.spi.TlsRefusals;
import io.switchboard.registry.wire.Watch;
import io.switchboard.registry.wire.WatchResponse;
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
 * Tells a listener when instances of some names (or of every name) appear, change or go, one event
 * at a time, in the registry's order.
 *
 * <p>How the changes arrive: when the registry has a watch stream (its {@code watch} answer says
 * where), the watch is one gRPC server-streaming call on an HTTP/2 connection that every watch of
 * this JVM to that registry shares ({@link WatchStreamMethod}); it holds no thread and no
 * connection of its own, and the listener runs on one of a few shared threads (so it should not
 * block for long). Otherwise (a registry without the stream) a daemon thread long-polls the SOAP
 * {@code watch} operation and runs the listener. A stream the registry refuses (over its limit, or
 * over this client's share) is logged with the registry's reason and asked for again later,
 * every 5 to 60 s; {@link #refusal()} tells the latest reason.
 *
 * <p>It first reports every instance bound now as {@link RegistryEvent.Kind#APPEAR}, then the
 * changes. It keeps its own view of the instances, so whatever happens between polls — the
 * registry restarted, another registry server answers, changes fell out of the registry's buffer
 * — it looks the names up again and reports the difference: the listener's picture is always
 * the registry's, and each change is reported once. While the registry cannot be reached it
 * retries (back-off up to 5 s) and reports nothing; a stream that ends within 5 s of opening
 * counts as a failure, so a registry (or proxy) that answers once and hangs up is not asked ten
 * times a second. Over several registries a poll waits at most
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
    private final Consumer<RegistryWatch> whenDenied;
    private final Map<Key, ComponentEntry> known = new HashMap<>();
    private final CountDownLatch synced = new CountDownLatch(1);
    /** Counted down once the watch has synced, or was refused in a way waiting does not mend. */
    private final CountDownLatch settled = new CountDownLatch(1);
    private Thread thread;
    private volatile boolean closed;
    /** The stream's call and connection while it runs; guarded by this. */
    private ClientCall<Watch, WatchResponse> call;
    /** Where the watch goes on from: the registry's epoch and version last seen. Touched by one step at a time. */
    private String epoch;
    private Long since;
    private long backoffMillis = RETRY_FIRST_MILLIS;
    private volatile String refusal;
    /** The registry's policy refused this watch when it was last asked; set before {@link #settled} counts down. */
    private volatile boolean denied;

    private RegistryWatch(RegistryClient registry, Collection<String> names, Consumer<RegistryEvent> listener,
                          Consumer<RegistryWatch> whenDenied) {
        this.registry = registry;
        this.names = Set.copyOf(names);
        this.listener = listener;
        this.whenDenied = whenDenied;
    }

    /**
     * Starts watching {@code names} (every name when empty) through {@code registry}, which must
     * stay open while the watch runs.
     */
    public static RegistryWatch start(RegistryClient registry, Collection<String> names,
                                      Consumer<RegistryEvent> listener) {
        return start(registry, names, listener, w -> { });
    }

    /**
     * As {@link #start(RegistryClient, Collection, Consumer)}, and tells {@code whenDenied} each
     * time the registry's policy refuses the watch, at its start or later (a policy edited while
     * it runs): the owner may close it and watch fewer names. Runs where the refusal arrives,
     * before the watch asks again; a watch closed there asks no more.
     */
    public static RegistryWatch start(RegistryClient registry, Collection<String> names,
                                      Consumer<RegistryEvent> listener, Consumer<RegistryWatch> whenDenied) {
        RegistryWatch w = new RegistryWatch(registry, names, listener, whenDenied);
        WatchChannels.CONNECT.execute(w::connect);
        return w;
    }

    private static final long RETRY_FIRST_MILLIS = 100;
    private static final long RETRY_MAX_MILLIS = 5_000;
    private static final long REFUSED_FIRST_MILLIS = 5_000;
    private static final long REFUSED_MAX_MILLIS = 60_000;
    /** A stream that delivered and lived this long was healthy: the back-off starts over after it. */
    private static final long HEALTHY_STREAM_NANOS = Duration.ofSeconds(5).toNanos();

    /**
     * Whether the registry's policy refused this watch when it was last asked (the watch goes on
     * asking): a caller may be allowed to watch some names and not every name. Not for a caller
     * whose credentials did not verify.
     */
    public boolean denied() {
        return denied;
    }

    /** The registry's reason when it last refused this watch's stream; null once a stream is open. */
    public String refusal() {
        return refusal;
    }

    /** Opens the stream where the registry says it is, or long-polls when it has none. */
    private void connect() {
        if (closed) {
            return;
        }
        String address;
        try {
            address = registry.streamAddress(names);
        } catch (RuntimeException e) {
            failed(e);
            if (closed) {
                return;
            }
            retry(null, "asking " + registry.url() + " where it streams: " + e.getMessage(), false);
            return;
        }
        if (address == null) {
            poll();
            return;
        }
        io.grpc.Metadata headers;
        try {
            // the caller's token, asked for now: a token file caught mid-rotation throws. Out of
            // here it would end the task that connects, and the watch would never connect again
            headers = registry.streamHeaders();
        } catch (RuntimeException e) {
            retry(null, "the credentials for the stream at " + address + ": " + e.getMessage(), false);
            return;
        }
        ManagedChannel channel;
        try {
            channel = WatchChannels.acquire(address, registry.tls());
        } catch (RuntimeException e) {
            registry.streamFailed(address);
            retry(null, "the stream at " + address + ": " + e.getMessage(), false);
            return;
        }
        var c = channel.newCall(WatchStreamMethod.client(), io.grpc.CallOptions.DEFAULT);
        synchronized (this) {
            if (closed) {
                WatchChannels.release(channel);
                return;
            }
            call = c;
        }
        Watch request = new Watch();
        request.setNames(new ArrayList<>(names));
        request.setEpoch(epoch);
        request.setSinceVersion(since);
        c.start(new Stream(c, channel, address), headers);
        c.sendMessage(request);
        c.halfClose();
        c.request(1);
    }

    /** One stream's messages, in order (gRPC runs one callback of a call at a time). */
    private final class Stream extends ClientCall.Listener<WatchResponse> {
        private final ClientCall<?, ?> own;
        private final ManagedChannel channel;
        private final String address;
        private final long openedAt = System.nanoTime();
        /** Touched by gRPC's callbacks, one at a time. */
        private boolean delivered;

        Stream(ClientCall<?, ?> own, ManagedChannel channel, String address) {
            this.own = own;
            this.channel = channel;
            this.address = address;
        }

        @Override
        public void onMessage(WatchResponse message) {
            RegistryClient.WatchResult r;
            try {
                r = RegistryClient.fromWire(message);
            } catch (RuntimeException e) {
                own.cancel("the registry sent a change that cannot be read: " + e.getMessage(), e);
                return;
            }
            if (r.reset()) {
                // a snapshot: every instance of the names, bound at its version
                resync(r.events().stream().map(RegistryEvent::entry).toList());
            } else {
                r.events().forEach(RegistryWatch.this::apply);
            }
            epoch = r.epoch();
            since = r.version();
            delivered = true;
            refusal = null;
            denied = false;
            synced.countDown();
            settled.countDown();
            own.request(1);
        }

        @Override
        public void onClose(Status status, Metadata trailers) {
            WatchChannels.release(channel);
            synchronized (RegistryWatch.this) {
                if (call == own) {
                    call = null;
                }
            }
            if (closed) {
                return;
            }
            // a stream that answers once and ends (a broken registry, a proxy that cuts streams)
            // is a failure like any other: only one that carried changes for a while starts the
            // back-off over, or such a registry would be asked again ten times a second
            if (delivered && System.nanoTime() - openedAt >= HEALTHY_STREAM_NANOS) {
                backoffMillis = RETRY_FIRST_MILLIS;
            }
            if (status.getCode() == Status.Code.RESOURCE_EXHAUSTED) {
                refusal = status.getDescription();
                retry(address, "the registry at " + address + " refused the watch: " + status.getDescription(), true);
            } else {
                if (status.getCode() == Status.Code.UNAUTHENTICATED || status.getCode() == Status.Code.PERMISSION_DENIED) {
                    denied = status.getCode() == Status.Code.PERMISSION_DENIED;
                    settled.countDown();
                    if (denied) {
                        tellDenied();
                    }
                } else {
                    failed(status.getCause());
                }
                if (closed) {
                    return;   // closed on the refusal by its owner
                }
                registry.streamFailed(address);
                retry(address, "the stream at " + address + " ended: " + status.getCode()
                        + (status.getDescription() == null ? "" : " (" + status.getDescription() + ")"), false);
            }
        }
    }

    /** Connects again after a pause that doubles with each failure in a row (longer when refused). */
    private void retry(String address, String why, boolean refused) {
        long base = refused ? Math.max(REFUSED_FIRST_MILLIS, backoffMillis) : backoffMillis;
        backoffMillis = Math.min(refused ? REFUSED_MAX_MILLIS : RETRY_MAX_MILLIS, base * 2);
        long delay = WatchChannels.jitter(base);
        if (WatchChannels.worthWarning(address == null ? registry.url() : address)) {
            LOG.warn("watching {}: {}; trying again in {} ms (the other watches of this JVM alike are logged at"
                    + " DEBUG for 10 s)", names.isEmpty() ? "every name" : names, why, delay);
        } else {
            LOG.debug("watching {}: {}; trying again in {} ms", names.isEmpty() ? "every name" : names, why, delay);
        }
        WatchChannels.TIMER.schedule(() -> WatchChannels.CONNECT.execute(this::connect), delay,
                TimeUnit.MILLISECONDS);
    }

    /** The registry has no stream: a thread of this watch's own long-polls its SOAP {@code watch}. */
    private synchronized void poll() {
        if (closed || thread != null) {
            return;
        }
        thread = DaemonThreads.start(this::run, "registry-watch-" + (names.isEmpty() ? "*" : String.join(",", names)));
    }

    /**
     * Waits until the instances bound at the start have been reported; false if that took longer
     * than {@code timeout}, or at once if the registry refused this client's TLS handshake or
     * credentials (the watch goes on trying).
     */
    public boolean awaitSynced(Duration timeout) throws InterruptedException {
        settled.await(timeout.toMillis(), TimeUnit.MILLISECONDS);
        return synced.getCount() == 0;
    }

    /**
     * A failure that waiting does not mend: the registry refused this client's TLS handshake, or
     * its credentials. The watch goes on trying in the background, but whoever waits for it to
     * sync ({@link #awaitSynced}) is let go at once rather than after its whole timeout.
     */
    private void failed(Throwable failure) {
        if (failure instanceof PermissionDeniedException p) {
            denied = !p.unauthenticated();   // credentials that did not verify are refused whatever the names
        }
        if (TlsRefusals.refusedHandshake(failure) || failure instanceof PermissionDeniedException) {
            settled.countDown();
        }
        if (failure instanceof PermissionDeniedException && denied) {
            tellDenied();
        }
    }

    private void tellDenied() {
        try {
            whenDenied.accept(this);
        } catch (RuntimeException e) {
            LOG.warn("registry watch refusal handler failed: {}", e.toString());
        }
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
                denied = false;
                synced.countDown();
                settled.countDown();
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
                failed(e);
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
        resync(now);
    }

    /** Reports the difference between {@code now}, every instance bound, and what the listener was told. */
    private void resync(List<ComponentEntry> now) {
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

    /** Stops reporting at once; a stream is cancelled, a polling thread ends when its poll returns. */
    @Override
    public void close() {
        ClientCall<?, ?> c;
        synchronized (this) {
            closed = true;
            c = call;
            if (thread != null) {
                thread.interrupt();
            }
        }
        if (c != null) {
            c.cancel("the watch was closed", null);
        }
    }
}
