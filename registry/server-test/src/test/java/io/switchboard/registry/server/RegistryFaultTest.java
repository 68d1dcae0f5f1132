package io.switchboard.registry.server;

import io.switchboard.registry.ComponentEntry;
import io.switchboard.registry.Entries;
import io.switchboard.registry.RegistryClient;
import io.switchboard.registry.store.InMemoryRegistryStore;
import io.switchboard.registry.store.RegistryStore;
import io.switchboard.registry.wire.RenewFaultException;
import io.switchboard.protocol.Endpoint;
import io.switchboard.registry.zookeeper.ZooKeeperRegistryStore;
import io.switchboard.client.Switchboard;
import io.switchboard.server.ComponentServer;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.switchboard.protocol.ClientSettings;
import io.switchboard.protocol.TransportException;
import io.switchboard.testing.conformance.Conformance;
import io.switchboard.testing.conformance.ConformanceComponent;
import io.switchboard.testing.conformance.ConformanceImpl;
import io.switchboard.testing.CountingSkeleton;
import io.switchboard.testing.FaultProxy;
import io.switchboard.testing.ManualClock;
import java.net.URI;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.BooleanSupplier;
import org.apache.curator.test.KillSession;
import org.apache.curator.test.TestingServer;
import org.junit.jupiter.api.Test;

/**
 * The registry failing under running components and clients: cut off by a {@link FaultProxy}, and
 * its ZooKeeper session expired. Calls to a component already looked up go on (each counted once
 * on the server: none lost, none run twice), lookups fail clearly while the registry is away, and
 * the component's lease heartbeat puts its entry back once the registry is reachable again.
 */
class RegistryFaultTest {
    private static final Duration GENEROUS = Duration.ofSeconds(20);
    private static final String SECRET = "s";

    private static void await(String what, BooleanSupplier condition) throws InterruptedException {
        long end = System.nanoTime() + GENEROUS.toNanos();
        while (!condition.getAsBoolean()) {
            assertTrue(System.nanoTime() < end, "waited " + GENEROUS + " for: " + what);
            Thread.sleep(50);
        }
    }

    private static List<String> bound(RegistryServer registry) {
        return registry.store().lookup("Conformance").stream().map(ComponentEntry::instanceId).toList();
    }

    /** {@link #bound}, or null while the store cannot be reached. */
    private static List<String> boundOrUnreachable(RegistryServer registry) {
        try {
            return bound(registry);
        } catch (RegistryStore.StoreException e) {
            return null;
        }
    }

    /**
     * A renewal that reaches the registry while its store cannot be reached fails as unavailable,
     * yet keeps the lease running: an outage of the store (a ZooKeeper leader election, which once
     * dropped a renewed entry in MultiHostTest) must not drop entries whose servers kept renewing.
     */
    @Test
    void aRenewalTheStoreCannotTakeStillKeepsTheLeaseRunning() throws Exception {
        ManualClock clock = new ManualClock();
        LosableStore store = new LosableStore(new InMemoryRegistryStore());
        RegistryService registry = new RegistryService(store, SECRET, clock);
        ComponentEntry leased = new ComponentEntry("Leased", "l1",
                List.of(new Endpoint("soap", "http://127.0.0.1:1/axis2/services/Leased")), null, null, null, null,
                List.of(), 10);
        registry.bind(Entries.toWire(leased), SECRET);
        clock.advance(Duration.ofSeconds(9));
        store.lost = true;
        assertThrows(RenewFaultException.class, () -> registry.renew("Leased", "l1", SECRET));
        store.lost = false;
        clock.advance(Duration.ofSeconds(2));   // past the deadline of the bind's lease
        assertEquals(0, registry.sweep(), "the renewal the store could not take moved the deadline to 19 s");
        assertEquals(1, registry.lookup("Leased").size());
        clock.advance(Duration.ofSeconds(9));
        assertEquals(1, registry.sweep(), "not renewed since: its lease ran out");
        assertTrue(registry.lookup("Leased").isEmpty());
    }

    @Test
    void aCutRegistryLeavesCallsWorkingFailsLookupsClearlyAndTheLeaseRecovers() throws Exception {
        ConformanceImpl impl = new ConformanceImpl();
        Map<String, AtomicInteger> served = new ConcurrentHashMap<>();
        // the line cuts the SOAP port only: watches long-poll over it (no stream on a port of its
        // own), so that the cut reaches them as it reaches the renewals
        try (RegistryServer registry = RegistryServer.builder().secret(SECRET).sweepInterval(Duration.ofMillis(100))
                .watchStream(false).start();
             FaultProxy line = FaultProxy.to(URI.create(registry.endpoint()).getHost(),
                     URI.create(registry.endpoint()).getPort())) {
            String viaLine = registry.endpoint().replaceFirst(":" + URI.create(registry.endpoint()).getPort() + "/",
                    ":" + line.port() + "/");
            try (ComponentServer server = ComponentServer.builder().registry(viaLine, SECRET)
                         .lease(Duration.ofSeconds(1)).build();
                 Switchboard client = Switchboard.builder(viaLine)
                         .settings(ClientSettings.defaults().withCallTimeout(Duration.ofSeconds(5))).connect()) {
                ComponentEntry entry = server.export(new CountingSkeleton(ConformanceComponent.skeleton(impl),
                        "component", served, x -> { }));
                Conformance stub = client.lookup(ConformanceComponent.DESCRIPTOR, ConformanceComponent::stub);
                assertEquals(1, stub.increment(1));

                line.refuse();
                // with no renewal getting through, the registry drops the entry when its 1 s lease runs out
                await("the unrenewed entry to go", () -> bound(registry).isEmpty());
                for (int i = 2; i <= 21; i++) {
                    assertEquals(i, stub.increment(1), "a call to the component looked up before the cut");
                }
                // the registry cannot be reached: a transport failure naming it, not a hang or a wrong answer
                TransportException lookup = assertThrows(TransportException.class,
                        () -> client.lookup(ConformanceComponent.DESCRIPTOR, ConformanceComponent::stub));
                System.out.println("lookup with the registry cut: " + lookup.getMessage());
                assertTrue(lookup.getMessage().contains(String.valueOf(line.port())),
                        "the error names the registry it could not reach: " + lookup.getMessage());

                line.pass();
                await("the heartbeat to bind the entry again", () -> bound(registry).equals(List.of(entry.instanceId())));
                Conformance again = client.lookup(ConformanceComponent.DESCRIPTOR, ConformanceComponent::stub);
                assertEquals(22, again.increment(1));
                assertEquals(23, stub.increment(1));
                assertEquals(23, impl.increments.get(), "every call ran once: none lost, none twice");
                assertEquals(23, served.get("component").get());
            }
        }
    }

    @Test
    void anExpiredZooKeeperSessionLosesNoCallAndTheEntryComesBack() throws Exception {
        ConformanceImpl impl = new ConformanceImpl();
        try (TestingServer zookeeper = ScratchZooKeeper.started(200);
             ZooKeeperRegistryStore store = ZooKeeperRegistryStore.builder(zookeeper.getConnectString())
                     .root("/fault").sessionTimeout(Duration.ofSeconds(2)).connectionTimeout(Duration.ofSeconds(2))
                     .start();
             RegistryServer registry = RegistryServer.builder().store(store).secret(SECRET).start();
             ComponentServer server = ComponentServer.builder().registry(registry.endpoint(), SECRET)
                     .lease(Duration.ofSeconds(1)).build();
             Switchboard client = Switchboard.connect(registry.endpoint())) {
            ComponentEntry entry = server.export(ConformanceComponent.skeleton(impl));
            Conformance stub = client.lookup(ConformanceComponent.DESCRIPTOR, ConformanceComponent::stub);
            assertEquals(1, stub.increment(1));
            long oldSession = store.sessionId();

            KillSession.kill(store.curator().getZookeeperClient().getZooKeeper());
            for (int i = 2; i <= 11; i++) {
                assertEquals(i, stub.increment(1), "calls go straight to the component, not through ZooKeeper");
            }
            await("a new ZooKeeper session", () -> store.sessionId() != oldSession);
            // a 2 s session on a starved machine may lose its connection again after the new session
            // began: a lookup then fails as the store's does while ZooKeeper is away, which is not yet
            await("the entry back under the new session",
                    () -> List.of(entry.instanceId()).equals(boundOrUnreachable(registry)));
            assertNotEquals(oldSession, store.sessionId());

            Conformance fresh = client.lookup(ConformanceComponent.DESCRIPTOR, ConformanceComponent::stub);
            assertEquals(12, fresh.increment(1));
            assertEquals(13, stub.increment(1));
            assertEquals(13, impl.increments.get(), "every call ran once: none lost, none twice");
        }
    }

    /** A store shared with another registry server that this one can lose, as ZooKeeper when cut off from it. */
    private static final class LosableStore implements RegistryStore {
        private final RegistryStore shared;
        volatile boolean lost;

        LosableStore(RegistryStore shared) {
            this.shared = shared;
        }

        private RegistryStore reach() {
            if (lost) {
                throw new StoreException("the store cannot be reached (test)");
            }
            return shared;
        }

        @Override
        public void bind(ComponentEntry entry) throws AlreadyBoundException {
            reach().bind(entry);
        }

        @Override
        public void rebind(ComponentEntry entry) {
            reach().rebind(entry);
        }

        @Override
        public int unbind(String name, String instanceId) {
            return reach().unbind(name, instanceId);
        }

        @Override
        public List<ComponentEntry> lookup(String name) {
            return reach().lookup(name);
        }

        @Override
        public List<ComponentEntry> list() {
            return reach().list();
        }

        @Override
        public boolean shared() {
            return true;
        }
    }

    /**
     * A registry server that has lost its store answers writes "unavailable" and changes nothing:
     * the component's renew moves on to the next registry server instead of failing there until its
     * lease runs out: not only transport failures move it on.
     */
    @Test
    void aRegistryThatLostItsStoreSendsRenewsToTheNext() throws Exception {
        InMemoryRegistryStore shared = new InMemoryRegistryStore();
        LosableStore losable = new LosableStore(shared);
        try (RegistryServer first = RegistryServer.builder().store(losable).secret(SECRET).start();
             RegistryServer second = RegistryServer.builder().store(shared).secret(SECRET).start();
             RegistryClient both = RegistryClient.connect(List.of(first.endpoint(), second.endpoint()), SECRET,
                     ClientSettings.defaults())) {
            ComponentEntry e = new ComponentEntry("Echo", "e1", List.of(new Endpoint("soap",
                    "http://127.0.0.1:1/axis2/services/Echo")), null, null, null, null, List.of(), 30);
            both.bind(e);
            assertTrue(both.renew("Echo", "e1"));
            losable.lost = true;
            assertTrue(both.renew("Echo", "e1"), "the second registry server renewed it");
            assertTrue(second.service().store().find("Echo", "e1").isPresent());
            both.rebind(e);
            assertEquals(1, both.unbind("Echo", "e1"));
        }
    }
}
