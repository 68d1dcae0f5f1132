package io.switchboard.registry.server;

import static io.switchboard.registry.server.RegistryWatchTest.entry;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.switchboard.registry.ComponentEntry;
import io.switchboard.registry.RegistryClient;
import io.switchboard.registry.RegistryEvent;
import io.switchboard.registry.RegistryWatch;
import io.switchboard.registry.zookeeper.ZooKeeperRegistryStore;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import org.apache.curator.test.TestingServer;
import org.junit.jupiter.api.Test;

/**
 * Two registry servers on one ZooKeeper behind one list of addresses: clients spread over both,
 * and those on a server that stops move to the other without missing a change.
 */
class SeveralRegistriesTest {
    private static final Duration GENEROUS = Duration.ofSeconds(30);
    private static final int CLIENTS = 24;

    /** What one watcher was told, checked against the watch contract as it arrives. */
    private static final class Watcher {
        final Map<String, Integer> view = new ConcurrentHashMap<>();
        final List<String> broken = new CopyOnWriteArrayList<>();
        final CountDownLatch sawFirst = new CountDownLatch(1);
        final CountDownLatch sawMarker = new CountDownLatch(1);

        void on(RegistryEvent e) {
            Integer port = e.kind() == RegistryEvent.Kind.GO ? null
                    : e.entry().endpoint("soap").orElseThrow().uri().getPort();
            boolean known = view.containsKey(e.instanceId());
            switch (e.kind()) {
                case APPEAR -> check(!known, "APPEAR of an instance already reported: " + e);
                case CHANGE -> check(known, "CHANGE of an instance never reported: " + e);
                case GO -> check(known, "GO of an instance never reported: " + e);
            }
            if (port == null) {
                view.remove(e.instanceId());
            } else {
                view.put(e.instanceId(), port);
            }
            if (e.instanceId().equals("first")) {
                sawFirst.countDown();
            }
            if (e.instanceId().equals("marker") && port != null) {
                sawMarker.countDown();
            }
        }

        private void check(boolean ok, String what) {
            if (!ok) {
                broken.add(what);
            }
        }
    }

    @Test
    void clientsSpreadOverBothAndThoseOfAStoppedServerMissNoChange() throws Exception {
        List<RegistryClient> clients = new ArrayList<>();
        List<RegistryWatch> watches = new ArrayList<>();
        List<Watcher> watchers = new ArrayList<>();
        try (TestingServer zookeeper = ScratchZooKeeper.started(200);
             RegistryServer b = RegistryServer.builder().store(zk(zookeeper)).start()) {
            RegistryServer a = RegistryServer.builder().store(zk(zookeeper)).start();
            boolean aStopped = false;
            try (RegistryClient writer = RegistryClient.connect(b.endpoint())) {
                for (int i = 0; i < CLIENTS; i++) {
                    RegistryClient c = RegistryClient.connect(a.endpoint() + "," + b.endpoint());
                    clients.add(c);
                    Watcher w = new Watcher();
                    watchers.add(w);
                    watches.add(RegistryWatch.start(c, List.of("Moving"), w::on));
                }
                for (RegistryWatch w : watches) {
                    assertTrue(w.awaitSynced(GENEROUS));
                }
                int onA = a.openWatchStreams();
                int onB = b.openWatchStreams();
                System.out.printf("%d watching clients: %d on registry a, %d on b%n", CLIENTS, onA, onB);
                assertEquals(CLIENTS, onA + onB);
                assertTrue(onA > 0 && onB > 0, "clients spread over both registry servers: " + onA + " and " + onB);

                writer.bind(entry("Moving", "first", 3001, 0));
                for (Watcher w : watchers) {
                    assertTrue(w.sawFirst.await(GENEROUS.toSeconds(), TimeUnit.SECONDS));
                }
                a.close();
                aStopped = true;
                // changes while the watchers of a move to b: each must end on the final state
                writer.bind(entry("Moving", "second", 3002, 0));
                writer.rebind(entry("Moving", "first", 3003, 0));
                writer.unbind("Moving", "second");
                writer.bind(entry("Moving", "third", 3004, 0));
                writer.bind(entry("Moving", "marker", 3009, 0));

                Map<String, Integer> truth = new TreeMap<>();
                for (ComponentEntry e : writer.lookup("Moving")) {
                    truth.put(e.instanceId(), e.endpoint("soap").orElseThrow().uri().getPort());
                }
                assertEquals(Map.of("first", 3003, "third", 3004, "marker", 3009), truth);
                for (Watcher w : watchers) {
                    assertTrue(w.sawMarker.await(GENEROUS.toSeconds(), TimeUnit.SECONDS), "a watcher never got to b");
                    assertEquals(truth, new TreeMap<>(w.view), "a watcher's view is the registry's");
                    assertEquals(List.of(), w.broken);
                }
                assertEquals(CLIENTS, b.openWatchStreams(), "every watch is on the server left");
                assertEquals(0, b.shedConnections());
            } finally {
                if (!aStopped) {
                    a.close();
                }
            }
        } finally {
            watches.forEach(RegistryWatch::close);
            clients.forEach(RegistryClient::close);
        }
    }

    private static ZooKeeperRegistryStore zk(TestingServer zookeeper) {
        return ZooKeeperRegistryStore.builder(zookeeper.getConnectString()).root("/several")
                .sessionTimeout(Duration.ofSeconds(2)).connectionTimeout(Duration.ofSeconds(5)).start();
    }
}
