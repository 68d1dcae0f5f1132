package io.switchboard.registry.server;

import static io.switchboard.registry.server.RegistryWatchTest.entry;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.switchboard.registry.RegistryClient;
import io.switchboard.registry.RegistryEvent;
import io.switchboard.registry.RegistryWatch;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

/**
 * Thousands of watchers on one registry server: each is told of a bind, none costs a SOAP
 * connection or a thread of its own, and writes get through while they watch.
 */
class ManyWatchersTest {
    private static final Duration GENEROUS = Duration.ofSeconds(30);
    /** Watchers in all: as many as two busy cores set up and tell within a few seconds. */
    private static final int WATCHERS = 2_000;
    /** Clients they are spread over (each its own SOAP connection pool, as separate processes would have). */
    private static final int CLIENTS = 20;

    @Test
    void everyWatcherIsToldOfABindAndWritesGetThrough() throws Exception {
        List<RegistryClient> clients = new ArrayList<>();
        List<RegistryWatch> watches = new ArrayList<>();
        try (RegistryServer registry = RegistryServer.builder().secret("s").start();
             RegistryClient writer = RegistryClient.connect(registry.endpoint(), "s")) {
            writer.bind(entry("Scale", "leased", 2001, 60));
            writer.bind(entry("Other", "o1", 2002, 0));
            CountDownLatch toldOfBind = new CountDownLatch(WATCHERS);
            CountDownLatch toldOfLeased = new CountDownLatch(WATCHERS);
            try {
                for (int c = 0; c < CLIENTS; c++) {
                    clients.add(RegistryClient.connect(registry.endpoint()));
                }
                for (int i = 0; i < WATCHERS; i++) {
                    // most watch one name; every tenth watches every name (as a Switchboard's follower does)
                    List<String> names = i % 10 == 0 ? List.of() : List.of("Scale");
                    watches.add(RegistryWatch.start(clients.get(i % CLIENTS), names, e -> {
                        if (e.kind() == RegistryEvent.Kind.APPEAR && e.instanceId().equals("new")) {
                            toldOfBind.countDown();
                        } else if (e.kind() == RegistryEvent.Kind.APPEAR && e.instanceId().equals("leased")) {
                            toldOfLeased.countDown();
                        }
                    }));
                }
                for (RegistryWatch w : watches) {
                    assertTrue(w.awaitSynced(GENEROUS), "a watcher did not sync");
                }
                assertTrue(toldOfLeased.await(GENEROUS.toSeconds(), TimeUnit.SECONDS),
                        "every watcher starts with the instances bound before it");
                assertEquals(WATCHERS, registry.openWatchStreams());

                long renewStart = System.nanoTime();
                assertTrue(writer.renew("Scale", "leased", Duration.ofSeconds(5)), "the lease renewal got through");
                long renewMillis = (System.nanoTime() - renewStart) / 1_000_000;
                long bindStart = System.nanoTime();
                writer.bind(entry("Scale", "new", 2003, 0));
                assertTrue(toldOfBind.await(GENEROUS.toSeconds(), TimeUnit.SECONDS),
                        toldOfBind.getCount() + " of " + WATCHERS + " watchers were not told of the bind");
                long toldMillis = (System.nanoTime() - bindStart) / 1_000_000;
                System.out.printf("%d watchers: renewal answered in %d ms, bind told to all in %d ms%n", WATCHERS,
                        renewMillis, toldMillis);

                assertEquals(0, registry.shedConnections(), "no SOAP connection was displaced or refused");
                assertEquals(0, registry.refusedWatchStreams(), "no watch was refused");
                long pollThreads = Thread.getAllStackTraces().keySet().stream()
                        .filter(t -> t.getName().startsWith("registry-watch-Scale") || t.getName().equals("registry-watch-*"))
                        .count();
                assertEquals(0, pollThreads, "no watch holds a thread of its own");
            } finally {
                // before the registry stops: its streams then end quietly
                watches.forEach(RegistryWatch::close);
                clients.forEach(RegistryClient::close);
            }
        }
    }

    @Test
    void aClientOverItsShareIsRefusedWithTheReasonAndTheOthersKeepWatching() throws Exception {
        try (RegistryServer registry = RegistryServer.builder().maxWatches(100, 3).start();
             RegistryClient client = RegistryClient.connect(registry.endpoint())) {
            CountDownLatch told = new CountDownLatch(3);
            List<RegistryWatch> admitted = new ArrayList<>();
            for (int i = 0; i < 3; i++) {
                RegistryWatch w = RegistryWatch.start(client, List.of("Limited"), e -> told.countDown());
                admitted.add(w);
                assertTrue(w.awaitSynced(GENEROUS));
            }
            try (RegistryWatch over = RegistryWatch.start(client, List.of("Limited"), e -> { })) {
                long deadline = System.nanoTime() + GENEROUS.toNanos();
                while (over.refusal() == null && System.nanoTime() < deadline) {
                    Thread.sleep(10);   // until the refusal arrives
                }
                assertNotNull(over.refusal(), "the watch over the client's share was refused");
                assertTrue(over.refusal().contains("share"), over.refusal());
                assertTrue(registry.refusedWatchStreams() >= 1);
                assertEquals(3, registry.openWatchStreams(), "the refused watch holds nothing");
                client.bind(entry("Limited", "l1", 2004, 0));
                assertTrue(told.await(GENEROUS.toSeconds(), TimeUnit.SECONDS), "the admitted watches go on");
            } finally {
                admitted.forEach(RegistryWatch::close);
            }
            for (RegistryWatch w : admitted) {
                assertNull(w.refusal());
            }
        }
    }
}
