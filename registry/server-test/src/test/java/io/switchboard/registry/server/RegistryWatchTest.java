package io.switchboard.registry.server;

import io.switchboard.registry.zookeeper.ZooKeeperRegistryStore;
import io.switchboard.registry.ComponentEntry;
import io.switchboard.registry.RegistryClient;
import io.switchboard.registry.store.RegistryStore;
import io.switchboard.registry.RegistryWatch;
import io.switchboard.client.Switchboard;
import io.switchboard.registry.RegistryEvent;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.switchboard.protocol.Endpoint;
import io.switchboard.testing.ManualClock;
import io.switchboard.testing.UnusedPorts;
import io.switchboard.testing.conformance.ConformanceComponent;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;
import org.apache.curator.test.TestingServer;
import org.junit.jupiter.api.Test;

/**
 * Watches over real SOAP: events in the registry's order, from writes, lease sweeps and other
 * registry servers. Through one server every change is reported; through another server on
 * ZooKeeper the watch promises order and the final state (see {@link #assertFoldOf}).
 */
class RegistryWatchTest {
    private static final Duration GENEROUS = Duration.ofSeconds(30);

    static ComponentEntry entry(String name, String instance, int port, int lease) {
        return new ComponentEntry(name, instance, List.of(new Endpoint("soap", "http://127.0.0.1:" + port
                + "/axis2/services/" + name)), ConformanceComponent.DESCRIPTOR.schema(), null, null, null, List.of(), lease);
    }

    private static RegistryEvent next(BlockingQueue<RegistryEvent> events) throws InterruptedException {
        RegistryEvent e = events.poll(GENEROUS.toSeconds(), TimeUnit.SECONDS);
        assertNotNull(e, "no event within " + GENEROUS);
        return e;
    }

    private static void assertEvent(RegistryEvent.Kind kind, String instance, RegistryEvent e) {
        assertEquals(kind, e.kind(), e.toString());
        assertEquals(instance, e.instanceId(), e.toString());
    }

    @Test
    void appearChangeAndGoInOrderFromWritesAndLeaseSweeps() throws Exception {
        ManualClock clock = new ManualClock();
        try (RegistryServer registry = RegistryServer.builder().secret("s").clock(clock)
                .sweepInterval(Duration.ofHours(1)).start();
             RegistryClient writer = RegistryClient.connect(registry.endpoint(), "s");
             Switchboard sb = Switchboard.connect(registry.endpoint())) {
            writer.bind(entry("Alpha", "before", 1001, 0));
            BlockingQueue<RegistryEvent> alpha = new LinkedBlockingQueue<>();
            BlockingQueue<RegistryEvent> all = new LinkedBlockingQueue<>();
            RegistryWatch watch = sb.watch("Alpha", alpha::add);
            RegistryWatch everything = sb.watch(null, all::add);
            // synced: what is bound now was reported, so what follows arrives as changes
            assertTrue(watch.awaitSynced(GENEROUS) && everything.awaitSynced(GENEROUS));
            RegistryEvent first = next(alpha);
            assertEvent(RegistryEvent.Kind.APPEAR, "before", first);
            assertNull(first.entry().interfaceSchema(), "events carry entries without their schema");

            writer.bind(entry("Alpha", "a1", 1002, 0));
            writer.bind(entry("Beta", "b1", 1003, 0));          // another name: not for the Alpha watch
            writer.rebind(entry("Alpha", "a1", 1004, 0));       // moved to another port
            writer.bind(entry("Alpha", "leased", 1005, 10));
            assertEquals(1, writer.unbind("Alpha", "a1"));
            clock.advance(Duration.ofSeconds(11));
            assertEquals(1, registry.service().sweep());        // the lease of "leased" ran out

            assertEvent(RegistryEvent.Kind.APPEAR, "a1", next(alpha));
            RegistryEvent moved = next(alpha);
            assertEvent(RegistryEvent.Kind.CHANGE, "a1", moved);
            assertEquals("http://127.0.0.1:1004/axis2/services/Alpha", moved.entry().endpoint("soap").orElseThrow().address());
            assertEvent(RegistryEvent.Kind.APPEAR, "leased", next(alpha));
            assertEvent(RegistryEvent.Kind.GO, "a1", next(alpha));
            assertEvent(RegistryEvent.Kind.GO, "leased", next(alpha));

            // the watch on every name saw the same, with Beta in its place
            List<String> seen = new java.util.ArrayList<>();
            for (int i = 0; i < 7; i++) {
                RegistryEvent e = next(all);
                seen.add(e.kind() + " " + e.name() + "/" + e.instanceId());
            }
            assertEquals(List.of("APPEAR Alpha/before", "APPEAR Alpha/a1", "APPEAR Beta/b1", "CHANGE Alpha/a1",
                    "APPEAR Alpha/leased", "GO Alpha/a1", "GO Alpha/leased"), seen);

            // a rebind with the same content is no change
            writer.rebind(entry("Alpha", "before", 1001, 0));
            writer.bind(entry("Alpha", "marker", 1006, 0));
            RegistryEvent after = next(alpha);
            assertTrue(after.kind() == RegistryEvent.Kind.CHANGE || after.kind() == RegistryEvent.Kind.APPEAR);
            if (after.kind() == RegistryEvent.Kind.CHANGE) {
                // boundAt moved: the registry stamps every bind, so this is a real change of the entry
                assertEvent(RegistryEvent.Kind.CHANGE, "before", after);
                after = next(alpha);
            }
            assertEvent(RegistryEvent.Kind.APPEAR, "marker", after);
        }
    }

    @Test
    void aWatcherBehindARestartedRegistryIsToldTheDifference() throws Exception {
        int port = UnusedPorts.port();
        BlockingQueue<RegistryEvent> events = new LinkedBlockingQueue<>();
        RegistryServer first = RegistryServer.builder().port(port).start();
        try (Switchboard sb = Switchboard.connect(first.endpoint())) {
            try (RegistryClient w = RegistryClient.connect(first.endpoint())) {
                w.bind(entry("Gamma", "old", 1001, 0));
            }
            assertTrue(sb.watch("Gamma", events::add).awaitSynced(GENEROUS));
            assertEvent(RegistryEvent.Kind.APPEAR, "old", next(events));
            first.close();
            // a new registry (new epoch, versions from zero, other entries) on the same address
            try (RegistryServer second = RegistryServer.builder().port(port).start();
                 RegistryClient w = RegistryClient.connect(second.endpoint())) {
                w.bind(entry("Gamma", "new", 1002, 0));
                RegistryEvent a = next(events);
                RegistryEvent b = next(events);
                List<String> seen = List.of(a.kind() + " " + a.instanceId(), b.kind() + " " + b.instanceId());
                assertEquals(List.of("GO old", "APPEAR new"), seen);
            }
        } finally {
            first.close();
        }
    }

    @Test
    void bindsThroughAnotherRegistryServerAreSeenOnZooKeeper() throws Exception {
        try (TestingServer zookeeper = ScratchZooKeeper.started(200);
             RegistryServer a = RegistryServer.builder().store(zk(zookeeper)).start();
             RegistryServer b = RegistryServer.builder().store(zk(zookeeper)).start();
             RegistryClient writerA = RegistryClient.connect(a.endpoint());
             Switchboard watcherB = Switchboard.connect(b.endpoint())) {
            BlockingQueue<RegistryEvent> events = new LinkedBlockingQueue<>();
            assertTrue(watcherB.watch("Delta", events::add).awaitSynced(GENEROUS));
            writerA.bind(entry("Delta", "d1", 1001, 30));
            writerA.rebind(entry("Delta", "d1", 1002, 30));
            writerA.unbind("Delta", "d1");
            writerA.bind(entry("Delta", "marker", 1009, 30));
            // Through another server the watch promises order and the final state, not every state:
            // ZooKeeper may fold changes that follow each other faster than registry B reads them.
            List<String> seen = new ArrayList<>();
            for (RegistryEvent e = next(events); !e.instanceId().equals("marker"); e = next(events)) {
                seen.add(e.kind() + (e.kind() == RegistryEvent.Kind.GO ? "" : " " + port(e)));
            }
            assertFoldOf(List.of("APPEAR 1001", "CHANGE 1002", "GO"), seen);

            // a registry process that dies takes its leased entries along with its session
            writerA.bind(entry("Delta", "d2", 1003, 30));
            assertEvent(RegistryEvent.Kind.APPEAR, "d2", next(events));
            a.close();
            assertEvent(RegistryEvent.Kind.GO, "d2", next(events));
        }
    }

    private static int port(RegistryEvent e) {
        return e.entry().endpoint("soap").orElseThrow().uri().getPort();
    }

    /**
     * Whether {@code seen} is what a watch may report of the instance states {@code written}: a
     * subsequence in order, of states that ended where the writes ended. An APPEAR may carry a
     * later state than the first (the change folded into it); nothing seen at all is the final
     * state too when the instance ended gone. Never a state older than one already reported.
     */
    static void assertFoldOf(List<String> written, List<String> seen) {
        List<String> states = written.stream().map(w -> w.substring(w.indexOf(' ') + 1)).toList();
        int at = -1;
        for (int i = 0; i < seen.size(); i++) {
            String s = seen.get(i);
            String state = s.startsWith("GO") ? "GO" : s.substring(s.indexOf(' ') + 1);
            int found = states.subList(at + 1, states.size()).indexOf(state);
            assertTrue(found >= 0, "state " + s + " is not a later one of " + written + "; seen " + seen);
            at += 1 + found;
            String kind = s.split(" ")[0];
            assertTrue(i > 0 || !state.equals("GO"), "GO for an instance the watch never reported; seen " + seen);
            assertEquals(state.equals("GO") ? "GO" : i == 0 ? "APPEAR" : "CHANGE", kind, "seen " + seen);
        }
        boolean endsGone = states.get(states.size() - 1).equals("GO");
        assertTrue(seen.isEmpty() ? endsGone : at == states.size() - 1,
                "the watch ends on the final state of " + written + "; seen " + seen);
    }

    private static RegistryStore zk(TestingServer zookeeper) {
        return ZooKeeperRegistryStore.builder(zookeeper.getConnectString()).root("/watch")
                .sessionTimeout(Duration.ofSeconds(2)).connectionTimeout(Duration.ofSeconds(5)).start();
    }

    @Test
    void aClientOfSeveralRegistriesMovesToTheNextWhenOneIsDown() throws Exception {
        int dead = UnusedPorts.port();   // nothing listens there
        try (RegistryServer registry = RegistryServer.builder().start();
             RegistryClient client = RegistryClient.connect("http://127.0.0.1:" + dead + "/axis2/services/Registry, "
                     + registry.endpoint())) {
            assertEquals(2, client.urls().size());
            client.bind(entry("Epsilon", "e1", 1001, 0));     // not idempotent, but never delivered to the dead one
            assertEquals(List.of("e1"), client.lookup("Epsilon").stream().map(ComponentEntry::instanceId).toList());
            assertEquals(1, registry.store().lookup("Epsilon").size());
        }
    }
}
