package io.switchboard.registry.server;

import io.switchboard.testing.ChildJvm;
import io.switchboard.testing.ManualClock;

import io.switchboard.registry.file.FileRegistryStore;
import io.switchboard.registry.RegistryClient;
import io.switchboard.registry.ComponentEntry;
import io.switchboard.registry.file.FileRegistryStore;
import io.switchboard.registry.Entries;
import io.switchboard.server.ComponentServer;
import io.switchboard.registry.store.InMemoryRegistryStore;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.switchboard.protocol.Endpoint;
import io.switchboard.testing.conformance.ConformanceComponent;
import io.switchboard.testing.conformance.ConformanceImpl;
import io.switchboard.registry.wire.RenewFaultException;
import java.nio.file.Path;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** Leases: renewed entries stay, lapsed ones go, on a fake clock and in real time with a killed process. */
class LeaseTest {
    @TempDir
    Path dir;

    private static ComponentEntry entry(String name, String instance, int lease) {
        return new ComponentEntry(name, instance, List.of(new Endpoint("soap", "http://127.0.0.1:1/axis2/services/" + name)),
                null, null, null, null, List.of(), lease);
    }

    @Test
    void anEntryLivesWhileRenewedAndGoesWhenItsLeaseRunsOut() throws Exception {
        ManualClock clock = new ManualClock();
        RegistryService registry = new RegistryService(new InMemoryRegistryStore(), "s", clock);
        registry.bind(Entries.toWire(entry("Leased", "l1", 10)), "s");
        registry.bind(Entries.toWire(entry("Forever", "f1", 0)), "s");

        clock.advance(Duration.ofSeconds(9));
        assertEquals(0, registry.sweep());
        assertTrue(registry.renew("Leased", "l1", "s"));
        clock.advance(Duration.ofSeconds(9));
        assertEquals(0, registry.sweep(), "the renew moved the deadline to 19 s");
        assertEquals(1, registry.lookup("Leased").size());
        assertEquals(10, registry.lookup("Leased").get(0).getLeaseSeconds());

        assertThrows(RenewFaultException.class, () -> registry.renew("Leased", "l1", "wrong"));
        clock.advance(Duration.ofSeconds(1));
        assertEquals(1, registry.sweep(), "a refused renew extended nothing");
        assertTrue(registry.lookup("Leased").isEmpty());
        assertFalse(registry.renew("Leased", "l1", "s"), "a lapsed entry is reported as not bound");

        clock.advance(Duration.ofDays(30));
        assertEquals(0, registry.sweep());
        assertEquals(1, registry.lookup("Forever").size(), "an entry without a lease stays until unbound");
    }

    @Test
    void unbindEndsTheLeaseAndRebindRestartsIt() throws Exception {
        ManualClock clock = new ManualClock();
        RegistryService registry = new RegistryService(new InMemoryRegistryStore(), null, clock);
        registry.bind(Entries.toWire(entry("A", "a", 5)), null);
        clock.advance(Duration.ofSeconds(4));
        registry.rebind(Entries.toWire(entry("A", "a", 5)), null);
        clock.advance(Duration.ofSeconds(4));
        assertEquals(0, registry.sweep());
        registry.rebind(Entries.toWire(entry("A", "a", 0)), null);
        clock.advance(Duration.ofSeconds(60));
        assertEquals(0, registry.sweep(), "rebound without a lease: it stays");
        assertEquals(1, registry.unbind("A", null, null));
        assertFalse(registry.renew("A", "a", null));
    }

    @Test
    void leasesRestoredFromAFileStoreGetOneFullLease() throws Exception {
        Path file = dir.resolve("registry.json");
        ManualClock clock = new ManualClock();
        try (FileRegistryStore store = FileRegistryStore.open(file)) {
            new RegistryService(store, null, clock).bind(Entries.toWire(entry("A", "a", 10)), null);
        }
        clock.advance(Duration.ofHours(1));   // the registry was down for an hour
        try (FileRegistryStore store = FileRegistryStore.open(file)) {
            RegistryService registry = new RegistryService(store, null, clock);
            assertEquals(0, registry.sweep(), "the server gets a full lease to find the restarted registry");
            clock.advance(Duration.ofSeconds(10));
            assertEquals(1, registry.sweep());
        }
        try (FileRegistryStore store = FileRegistryStore.open(file)) {
            assertTrue(store.list().isEmpty(), "the drop was written through");
        }
    }

    @Test
    void leasesOutsideTheAllowedRangeAreRefused() {
        RegistryService registry = new RegistryService(new InMemoryRegistryStore(), null, Clock.systemUTC());
        var tooLong = Entries.toWire(entry("A", "a", 0));
        tooLong.setLeaseSeconds(EntryRules.MAX_LEASE_SECONDS + 1);
        assertThrows(io.switchboard.registry.wire.BindFaultException.class, () -> registry.bind(tooLong, null));
        var negative = Entries.toWire(entry("A", "a", 0));
        negative.setLeaseSeconds(-1);
        assertThrows(io.switchboard.registry.wire.BindFaultException.class, () -> registry.bind(negative, null));
        assertTrue(registry.listEntries().isEmpty());
    }

    @Test
    void theHeartbeatBindsAgainWhatTheRegistryLost() throws Exception {
        try (RegistryServer registry = RegistryServer.builder().secret("s").start();
             ComponentServer server = ComponentServer.builder().protocols("soap").registry(registry.endpoint(), "s")
                     .lease(Duration.ofSeconds(1)).build()) {
            ComponentEntry e = server.export(ConformanceComponent.skeleton(new ConformanceImpl()));
            assertEquals(1, e.leaseSeconds());
            registry.store().unbind(e.name(), null);   // as if the registry restarted without its entries
            long deadline = System.nanoTime() + Duration.ofSeconds(10).toNanos();
            while (registry.store().lookup(e.name()).isEmpty() && System.nanoTime() < deadline) {
                Thread.sleep(50);
            }
            assertEquals(List.of(e.instanceId()), registry.store().lookup(e.name()).stream()
                    .map(ComponentEntry::instanceId).toList());
        }
    }

    /**
     * A real lease: the server's process is alive for two leases and its entry stays; killed -9, it
     * goes when the lease runs out. The lease is 3 s, renewed every second: with a 1 s lease, a
     * child JVM starved for a second on a loaded machine (a flake hunt, one core kept busy) missed
     * two renewals and its entry lapsed while it lived, as a lease should.
     */
    @Test
    void aKilledServersEntryGoesWhenItsLeaseRunsOut() throws Exception {
        Duration lease = Duration.ofSeconds(3);
        try (RegistryServer registry = RegistryServer.builder().secret("s").sweepInterval(Duration.ofMillis(100))
                .start();
             RegistryClient reader = RegistryClient.connect(registry.endpoint());
             ChildJvm server = ChildJvm.start(dir.resolve("server.err"), LeasedServerMain.class, registry.endpoint(),
                     "s", Long.toString(lease.toSeconds()))) {
            String instance = server.await("bound");
            Instant boundAt = renewedAt(registry, instance);
            assertNotNull(boundAt, "the entry lapsed before the test saw it");
            // Waits for the event itself: a renewal received two leases after the bind. The
            // sweep drops a lapsed entry within 100 ms, so an entry missing meanwhile fails here.
            Instant renewed = boundAt;
            long deadline = System.nanoTime() + Duration.ofSeconds(30).toNanos();
            while (renewed.isBefore(boundAt.plus(lease.multipliedBy(2)))) {
                assertTrue(System.nanoTime() < deadline, "no renewal two leases after the bind");
                renewed = renewedAt(registry, instance);
                assertNotNull(renewed, "the entry lapsed while its server was alive");
                Thread.sleep(50);   // polling the registry's record of the last renewal
            }
            assertEquals(List.of(instance), reader.lookup("Conformance").stream().map(ComponentEntry::instanceId)
                    .toList(), "the heartbeat kept the entry for two leases");
            server.kill();
            // The limit is the behaviour: the entry goes when its lease runs out (swept every
            // 100 ms), not later; 4 s over the lease is the margin.
            long killed = System.nanoTime();
            while (!reader.lookup("Conformance").isEmpty()) {
                assertTrue(System.nanoTime() - killed < lease.plusSeconds(4).toNanos(), "the entry outlived its lease");
                Thread.sleep(50);
            }
        }
    }

    /**
     * The heartbeat's bind again, when the registry no longer holds an entry, waits a given time
     * on a registry that accepts and never answers, not the call timeout (30 s): it is what
     * brings a component back through the next registry while the first one hangs.
     */
    @Test
    void aRebindWithATimeoutGivesARegistryThatNeverAnswersOnlyThatTime() throws Exception {
        try (java.net.ServerSocket silent = new java.net.ServerSocket(0, 50, java.net.InetAddress.getLoopbackAddress());
             RegistryServer other = RegistryServer.builder().secret("s").start();
             RegistryClient both = RegistryClient.connect(List.of("http://127.0.0.1:" + silent.getLocalPort()
                     + "/axis2/services/Registry", other.endpoint()), "s", io.switchboard.protocol.ClientSettings.defaults())) {
            long started = System.nanoTime();
            try {
                both.rebind(entry("Back", "b1", 30), Duration.ofSeconds(1));
            } catch (io.switchboard.protocol.TransportException e) {
                assertEquals(io.switchboard.protocol.TransportException.Delivery.MAY_HAVE_RUN, e.delivery(), e.toString());
            }
            long tookMillis = (System.nanoTime() - started) / 1_000_000;
            assertTrue(tookMillis < 10_000, "the rebind waited " + tookMillis + " ms on the silent registry");
        }
    }

    /** When the registry last received a renewal of this instance's lease; null when it holds none. */
    private static Instant renewedAt(RegistryServer registry, String instance) {
        var live = registry.service().live().getOrDefault("Conformance", java.util.Map.of()).get(instance);
        return live == null ? null : live.renewedAt();
    }
}
