package io.switchboard.registry.server;

import io.switchboard.registry.ComponentEntry;
import io.switchboard.registry.Entries;
import io.switchboard.registry.RegistryClient;
import io.switchboard.registry.RegistryEvent;
import io.switchboard.registry.store.RegistryStore;
import io.switchboard.registry.wire.Event;
import io.switchboard.registry.wire.WatchResponse;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;

/**
 * What watchers read: the numbered changes of {@link WatchHub}, fed by the store's own change
 * reports (ZooKeeper: every registry server's writes) or, for a store that reports none, by this
 * server's writes; and the SOAP {@code watch}, a long poll on that hub. The watch stream
 * ({@link WatchStreamServer}) follows the same hub.
 */
final class RegistryWatches {
    /** Changes kept for watchers that are behind; one further back is told to reset. */
    static final int WATCH_BUFFER = 4096;
    static final int MAX_WATCH_SECONDS = RegistryClient.MAX_WATCH_SECONDS;
    /** Watches that may wait at once: each holds one of the SOAP server's 64 threads. */
    static final int MAX_WAITING_WATCHES = 32;
    static final int MAX_WATCHED_NAMES = 256;

    private final WatchHub hub;
    /** False when the store reports changes itself (ZooKeeper: also other servers' writes). */
    private final boolean reportOwnWrites;
    private volatile String stream;

    RegistryWatches(RegistryStore store) {
        this.hub = new WatchHub(store.list(), WATCH_BUFFER, MAX_WAITING_WATCHES);
        this.reportOwnWrites = !store.reportChanges(new RegistryStore.ChangeSink() {
            @Override
            public void bound(ComponentEntry entry) {
                hub.bound(entry);
            }

            @Override
            public void gone(String name, String instanceId) {
                hub.gone(name, instanceId);
            }
        });
    }

    /** This server bound {@code e}: watchers hear of it here unless the store reports it. */
    void wrote(ComponentEntry e) {
        if (reportOwnWrites) {
            hub.bound(e);
        }
    }

    /** This server removed an instance ({@code instanceId} null: every instance of {@code name}). */
    void removed(String name, String instanceId) {
        if (reportOwnWrites) {
            hub.gone(name, instanceId);
        }
    }

    /**
     * The SOAP long poll: the changes after {@code sinceVersion} to {@code names} (all when empty),
     * at once if there are any, else after up to {@code waitSeconds} (at most
     * {@value #MAX_WATCH_SECONDS}) with none; the answer names the watch stream, if there is one.
     */
    WatchResponse poll(List<String> names, String epoch, Long sinceVersion, Integer waitSeconds) {
        Set<String> wanted = WatchHub.names(names);
        if (wanted.size() > MAX_WATCHED_NAMES) {
            throw new IllegalArgumentException("a watch names at most " + MAX_WATCHED_NAMES + " components");
        }
        int wait = waitSeconds == null ? 0 : Math.max(0, Math.min(MAX_WATCH_SECONDS, waitSeconds));
        WatchResponse r = toWire(hub.poll(wanted, epoch, sinceVersion, Duration.ofSeconds(wait)));
        r.setStream(stream);
        return r;
    }

    /** A poll's answer in the registry's wire form, as the SOAP {@code watch} and the watch stream send it. */
    static WatchResponse toWire(WatchHub.Poll poll) {
        WatchResponse r = new WatchResponse();
        r.setEpoch(poll.epoch());
        r.setVersion(poll.version());
        r.setReset(poll.reset());
        List<Event> events = new ArrayList<>();
        for (WatchHub.Change c : poll.changes()) {
            Event w = new Event();
            w.setVersion(c.version());
            w.setKind(c.event().kind().wire());
            w.setName(c.event().name());
            w.setInstanceId(c.event().instanceId());
            if (c.event().kind() != RegistryEvent.Kind.GO) {
                w.setEntry(Entries.toWire(c.event().entry()));
            }
            events.add(w);
        }
        r.setEvents(events);
        return r;
    }

    /** The hub every watch reads, SOAP long polls and streams alike. */
    WatchHub hub() {
        return hub;
    }

    /** Where this server streams changes ({@code grpc://HOST:PORT}), told to SOAP watchers; null: nowhere. */
    void streamAt(String address) {
        stream = address;
    }

    /** Answers every waiting watch now; the registry is stopping. */
    void close() {
        hub.close();
    }
}
