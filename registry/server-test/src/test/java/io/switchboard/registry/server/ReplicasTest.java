package io.switchboard.registry.server;

import io.switchboard.client.Switchboard;
import io.switchboard.registry.ComponentEntry;
import io.switchboard.registry.RegistryClient;
import io.switchboard.client.ReplicatedChannel;
import io.switchboard.server.ComponentServer;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.switchboard.protocol.TransportException;
import io.switchboard.testing.conformance.Conformance;
import io.switchboard.testing.conformance.ConformanceComponent;
import io.switchboard.testing.conformance.ConformanceImpl;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.BooleanSupplier;
import org.junit.jupiter.api.Test;

/**
 * Replicas and following over real servers on loopback: calls spread over the instances of one
 * name, move off one that died without running a non-idempotent call twice, and a stub finds its
 * server again after it moved to new ports.
 */
class ReplicasTest {
    private static final Duration GENEROUS = Duration.ofSeconds(30);

    /** Remembers every increment it runs, by argument: each call of the test passes its own. */
    static final class CountingImpl extends ConformanceImpl {
        final Map<Integer, AtomicInteger> runs;

        CountingImpl(Map<Integer, AtomicInteger> runs) {
            this.runs = runs;
        }

        @Override
        public long increment(int by) {
            runs.computeIfAbsent(by, k -> new AtomicInteger()).incrementAndGet();
            return super.increment(by);
        }
    }

    private static void await(String what, BooleanSupplier condition) throws InterruptedException {
        long end = System.nanoTime() + GENEROUS.toNanos();
        while (!condition.getAsBoolean()) {
            assertTrue(System.nanoTime() < end, "waited " + GENEROUS + " for: " + what);
            Thread.sleep(20);
        }
    }

    /** A component server that does not bind itself: the test binds its entry, so that closing it is a crash. */
    private static ComponentServer unregistered() {
        return ComponentServer.builder().build();
    }

    @Test
    void callsSpreadOverReplicasAndMoveOffAKilledOneRunningEachCallAtMostOnce() throws Exception {
        Map<Integer, AtomicInteger> runs = new ConcurrentHashMap<>();
        List<CountingImpl> impls = new ArrayList<>();
        List<ComponentServer> servers = new ArrayList<>();
        List<ComponentEntry> bound = new ArrayList<>();
        try (RegistryServer registry = RegistryServer.builder().start();
             RegistryClient writer = RegistryClient.connect(registry.endpoint())) {
            for (int i = 0; i < 3; i++) {
                CountingImpl impl = new CountingImpl(runs);
                ComponentServer server = unregistered();
                bound.add(server.export(ConformanceComponent.skeleton(impl)));
                writer.bind(bound.get(i));
                impls.add(impl);
                servers.add(server);
            }
            try (Switchboard sb = Switchboard.connect(registry.endpoint())) {
                ReplicatedChannel channel = sb.replicas("Conformance", ConformanceComponent.DESCRIPTOR);
                assertEquals(3, channel.entries().size());
                Conformance c = ConformanceComponent.stub(channel);
                int next = 0;
                for (int i = 0; i < 30; i++) {
                    c.increment(++next);
                }
                for (CountingImpl impl : impls) {
                    assertEquals(10, impl.increments.get(), "one client calling in turn goes round-robin");
                }

                // kill one replica while four threads call: its entry stays in the registry (no unbind)
                ExecutorService pool = Executors.newFixedThreadPool(4);
                AtomicInteger arg = new AtomicInteger(next);
                List<Future<Integer>> results = new ArrayList<>();   // the argument of each call that succeeded, or -arg
                for (int i = 0; i < 400; i++) {
                    int by = arg.incrementAndGet();
                    results.add(pool.submit(() -> {
                        try {
                            c.increment(by);
                            return by;
                        } catch (TransportException e) {
                            assertEquals(TransportException.Delivery.MAY_HAVE_RUN, e.delivery(),
                                    "a call that never arrived is moved, not failed: " + e);
                            return -by;
                        }
                    }));
                    if (i == 100) {
                        servers.get(0).close();
                    }
                }
                pool.shutdown();
                assertTrue(pool.awaitTermination(GENEROUS.toSeconds(), TimeUnit.SECONDS));
                int failed = 0;
                for (Future<Integer> f : results) {
                    int r = f.get();
                    if (r > 0) {
                        assertEquals(1, runs.get(r).get(), "call " + r + " succeeded and ran exactly once");
                    } else {
                        failed++;
                        AtomicInteger ran = runs.get(-r);
                        assertTrue(ran == null || ran.get() == 1, "call " + -r + " ran at most once");
                    }
                }
                // a call fails only on a connection the client had open to the killed replica (in
                // flight over gRPC or SOAP, or pooled SOAP connections the kill left stale): then
                // it may have run, and it is not repeated
                assertTrue(failed <= 8, failed + " calls failed");
                assertTrue(runs.values().stream().allMatch(n -> n.get() == 1), "no call ran twice");

                // its lease runs out (here: it is unbound); afterwards every call succeeds, on the two that live
                assertEquals(1, writer.unbind("Conformance", bound.get(0).instanceId()));
                await("the channel to drop the killed replica", () -> channel.entries().size() == 2);
                long deadBefore = impls.get(0).increments.get();
                long[] liveBefore = {impls.get(1).increments.get(), impls.get(2).increments.get()};
                for (int i = 0; i < 20; i++) {
                    c.increment(arg.incrementAndGet());
                }
                assertEquals(deadBefore, impls.get(0).increments.get());
                assertTrue(impls.get(1).increments.get() > liveBefore[0] && impls.get(2).increments.get() > liveBefore[1],
                        "both live replicas still get calls");
            }
        } finally {
            servers.forEach(ComponentServer::close);
        }
    }

    /** Anyone may bind, renew, unbind, look up and watch {@code Conformance}, and nothing else: not a watch of every name. */
    private static final io.switchboard.server.authz.AuthorizationPolicy CONFORMANCE_ONLY =
            io.switchboard.server.authz.AuthorizationPolicy.parse("""
                    {"name": "conformance-only",
                     "allow_rules": [{"name": "its-name", "request": {"paths": [
                       "/switchboard.registry.Registry/bind/Conformance",
                       "/switchboard.registry.Registry/rebind/Conformance",
                       "/switchboard.registry.Registry/renew/Conformance",
                       "/switchboard.registry.Registry/unbind/Conformance",
                       "/switchboard.registry.Registry/lookup/Conformance",
                       "/switchboard.registry.Registry/watch/Conformance"]}}]}""");

    @Test
    void aClientTheRegistryLetsWatchOnlyTheNameItLooksUpStillFollowsItsReplicas() throws Exception {
        try (RegistryServer registry = RegistryServer.builder().authorization(CONFORMANCE_ONLY).start();
             Switchboard sb = Switchboard.connect(registry.endpoint())) {
            followsReplicasBoundAndGoneAfterItsLookup(registry, sb, () -> assertTrue(registry.denials().stream()
                    .anyMatch(d -> d.path().equals(RegistryPaths.SERVICE + "watch")),
                    "the watch of every name was refused: " + registry.denials()));
            assertTrue(registry.denials().stream().noneMatch(d -> d.path().startsWith(RegistryPaths.SERVICE + "watch/")),
                    "the watch of the name was allowed: " + registry.denials());
        }
    }

    @Test
    void aNameIsWatchedUntilTheLastReplicaSetLookedUpUnderItIsClosed() throws Exception {
        try (RegistryServer registry = RegistryServer.builder().authorization(CONFORMANCE_ONLY).start();
             Switchboard sb = Switchboard.connect(registry.endpoint());
             ComponentServer server = ComponentServer.builder().registry(registry.endpoint(), null).build()) {
            server.export(ConformanceComponent.skeleton(new ConformanceImpl()));
            ReplicatedChannel first = sb.replicas("Conformance", ConformanceComponent.DESCRIPTOR);
            ReplicatedChannel second = sb.replicas("Conformance", ConformanceComponent.DESCRIPTOR);
            await("the registry to hold the client's watch of the name", () -> registry.openWatchStreams() == 1);

            first.close();
            assertEquals(3, ConformanceComponent.stub(second).increment(3), "the other replica set still calls");
            assertEquals(1, registry.openWatchStreams(), "the name is still followed for the other replica set");
            second.close();
            await("the watch of a name no replica set follows any more to end",
                    () -> registry.openWatchStreams() == 0);
        }
    }

    private static final io.switchboard.server.authz.AuthorizationPolicy OPEN =
            io.switchboard.server.authz.AuthorizationPolicy.parse("""
                    {"name": "open", "allow_rules": [{"name": "anything"}]}""");

    @Test
    void aClientWhoseWatchOfEveryNameAPolicyEditRefusesFollowsTheNameItLookedUp() throws Exception {
        var policy = new java.util.concurrent.atomic.AtomicReference<>(OPEN);
        try (RegistryServer registry = RegistryServer.builder().authorization(policy::get).start();
             Switchboard sb = Switchboard.connect(registry.endpoint())) {
            followsReplicasBoundAndGoneAfterItsLookup(registry, sb, () -> {
                assertTrue(registry.denials().isEmpty(), "the watch of every name was allowed: " + registry.denials());
                policy.set(CONFORMANCE_ONLY);   // as a policy file edited while the client follows
            });
            assertTrue(registry.denials().stream().anyMatch(d -> d.path().equals(RegistryPaths.SERVICE + "watch")),
                    "the registry ended the watch of every name: " + registry.denials());
        }
    }

    /**
     * One replica bound and looked up through {@code sb}, then {@code afterLookup}; a second bound
     * and the first unbound after that reach the stub, and its next call runs on the second.
     */
    private static void followsReplicasBoundAndGoneAfterItsLookup(RegistryServer registry, Switchboard sb,
                                                                  Runnable afterLookup) throws Exception {
        ConformanceImpl first = new ConformanceImpl();
        ConformanceImpl second = new ConformanceImpl();
        ComponentServer one = ComponentServer.builder().registry(registry.endpoint(), null).build();
        try (ComponentServer two = ComponentServer.builder().registry(registry.endpoint(), null).build()) {
            ComponentEntry firstEntry = one.export(ConformanceComponent.skeleton(first));
            ReplicatedChannel channel = sb.replicas("Conformance", ConformanceComponent.DESCRIPTOR);
            Conformance c = ConformanceComponent.stub(channel);
            assertEquals(List.of(firstEntry.instanceId()), channel.entries().stream().map(ComponentEntry::instanceId).toList());
            afterLookup.run();

            ComponentEntry secondEntry = two.export(ConformanceComponent.skeleton(second));
            await("the stub to follow a replica bound after its lookup", () -> channel.entries().size() == 2);
            one.close();   // unbinds the first
            await("the stub to follow the first replica's unbind", () -> channel.entries().stream()
                    .map(ComponentEntry::instanceId).toList().equals(List.of(secondEntry.instanceId())));
            assertEquals(3, c.increment(3));
            assertEquals(1, second.increments.get());
            assertEquals(0, first.increments.get());
        } finally {
            one.close();
        }
    }

    @Test
    void aStubFollowsItsServerToNewPortsAndToAMovedEntry() throws Exception {
        try (RegistryServer registry = RegistryServer.builder().start();
             RegistryClient writer = RegistryClient.connect(registry.endpoint());
             Switchboard sb = Switchboard.connect(registry.endpoint())) {
            ConformanceImpl first = new ConformanceImpl();
            ConformanceImpl second = new ConformanceImpl();
            ConformanceImpl third = new ConformanceImpl();
            ReplicatedChannel channel;
            Conformance c;
            ComponentEntry secondEntry;
            try (ComponentServer server = ComponentServer.builder().registry(registry.endpoint(), null).build()) {
                server.export(ConformanceComponent.skeleton(first));
                channel = sb.replicas("Conformance", ConformanceComponent.DESCRIPTOR);
                c = ConformanceComponent.stub(channel);
                assertEquals(1, c.increment(1));
            }   // the server stops (and unbinds); it comes back on other ports as a new instance
            try (ComponentServer restarted = ComponentServer.builder().registry(registry.endpoint(), null).build()) {
                secondEntry = restarted.export(ConformanceComponent.skeleton(second));
                await("the stub to follow the restarted server", () -> channel.entries().stream()
                        .map(ComponentEntry::instanceId).toList().equals(List.of(secondEntry.instanceId())));
                assertEquals(5, c.increment(5));
                assertEquals(1, second.increments.get());
                assertEquals(1, first.increments.get());

                // the same instance re-bound at another server's endpoints: the stub's meta-stub is re-pointed
                try (ComponentServer elsewhere = unregistered()) {
                    ComponentEntry there = elsewhere.export(ConformanceComponent.skeleton(third));
                    writer.rebind(new ComponentEntry(secondEntry.name(), secondEntry.instanceId(), there.endpoints(),
                            null, null, null, null, secondEntry.features(), 0));
                    await("the stub to see the moved entry", () -> channel.entries().get(0).endpoints()
                            .equals(there.endpoints()));
                    assertEquals(7, c.increment(7));
                    assertEquals(1, third.increments.get());
                    assertEquals(1, second.increments.get());
                }
            }
        }
    }

    @Test
    void aCallWaitsForAReplicaWhileNoneIsBound() throws Exception {
        try (RegistryServer registry = RegistryServer.builder().start();
             Switchboard sb = Switchboard.connect(registry.endpoint())) {
            ConformanceImpl impl = new ConformanceImpl();
            ReplicatedChannel channel;
            try (ComponentServer server = ComponentServer.builder().registry(registry.endpoint(), null).build()) {
                server.export(ConformanceComponent.skeleton(impl));
                channel = sb.replicas("Conformance", ConformanceComponent.DESCRIPTOR);
            }
            await("the replica to go", () -> channel.entries().isEmpty());
            Conformance c = ConformanceComponent.stub(channel);
            ExecutorService one = Executors.newSingleThreadExecutor();
            try (ComponentServer again = ComponentServer.builder().registry(registry.endpoint(), null).build()) {
                Future<Long> call = one.submit(() -> c.increment(3));   // waits up to the connect timeout (5 s)
                again.export(ConformanceComponent.skeleton(impl));
                assertEquals(3, call.get(GENEROUS.toSeconds(), TimeUnit.SECONDS));
            } finally {
                one.shutdownNow();
            }
        }
    }
}
