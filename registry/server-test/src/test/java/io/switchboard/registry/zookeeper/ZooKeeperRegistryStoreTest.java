package io.switchboard.registry.zookeeper;

import org.apache.curator.retry.RetryOneTime;
import org.apache.curator.framework.recipes.cache.CuratorCache;
import org.apache.curator.framework.recipes.cache.ChildData;
import org.apache.curator.framework.recipes.cache.CuratorCacheListener;
import org.apache.curator.framework.CuratorFrameworkFactory;
import org.apache.curator.framework.CuratorFramework;
import java.util.Optional;
import io.switchboard.testing.ChildJvm;
import io.switchboard.testing.ManualClock;
import io.switchboard.testing.FaultProxy;
import io.switchboard.registry.RegistryWatch;
import io.switchboard.protocol.ClientSettings;
import java.net.URI;
import java.util.concurrent.CopyOnWriteArrayList;
import io.switchboard.registry.Entries;
import io.switchboard.registry.server.RegistryService;

import io.switchboard.registry.store.RegistryStore;
import io.switchboard.registry.RegistryException;
import io.switchboard.registry.RegistryClient;
import io.switchboard.registry.server.RegistryServer;
import io.switchboard.registry.ComponentEntry;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.switchboard.protocol.Endpoint;
import io.switchboard.testing.conformance.ConformanceComponent;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.apache.curator.framework.api.CuratorWatcher;
import java.util.function.BooleanSupplier;
import org.apache.curator.test.KillSession;
import io.switchboard.registry.server.ScratchZooKeeper;
import org.apache.curator.test.TestingServer;
import org.apache.zookeeper.ZooKeeper;
import org.apache.zookeeper.data.Stat;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The ZooKeeper store against a real ZooKeeper server in this JVM (Curator's TestingServer with
 * a 200 ms tick, so sessions may be as short as 400 ms): shared view, killed registry processes,
 * session expiry, connection loss and a ZooKeeper restart.
 */
class ZooKeeperRegistryStoreTest {
    private static final Duration SESSION = Duration.ofSeconds(2);
    private TestingServer zookeeper;
    private int roots;

    @TempDir
    Path dir;

    @BeforeEach
    void startZooKeeper() throws Exception {
        zookeeper = ScratchZooKeeper.started(200);
    }

    @AfterEach
    void stopZooKeeper() throws Exception {
        zookeeper.close();
    }

    private ZooKeeperRegistryStore store(String root) {
        return ZooKeeperRegistryStore.builder(zookeeper.getConnectString()).root(root).sessionTimeout(SESSION)
                .connectionTimeout(Duration.ofSeconds(2)).retries(1).start();
    }

    private static ComponentEntry entry(String name, String instance, int lease) {
        return new ComponentEntry(name, instance, List.of(new Endpoint("soap", "http://127.0.0.1:1/axis2/services/" + name)),
                ConformanceComponent.DESCRIPTOR.schema(), null, null, null, List.of(ComponentEntry.CALL_IDS), lease);
    }

    private static void await(String what, Duration limit, BooleanSupplier condition) throws InterruptedException {
        long end = System.nanoTime() + limit.toNanos();
        while (!condition.getAsBoolean()) {
            assertTrue(System.nanoTime() < end, "waited " + limit + " for: " + what);
            Thread.sleep(50);
        }
    }

    @Test
    void anExpiredLeaseRemovesTheEntryOnlyWhileItIsStillThisServers() throws Exception {
        try (ZooKeeperRegistryStore first = store("/t/expire"); ZooKeeperRegistryStore second = store("/t/expire")) {
            first.bind(entry("Echo", "e1", 30));
            // the component renews through the second server now, which takes the entry over
            second.rebind(entry("Echo", "e1", 30));
            assertEquals(second.sessionId(), first.curator().checkExists().forPath("/t/expire/Echo/e1").getEphemeralOwner());
            assertFalse(first.expire("Echo", "e1"), "the first server's lease ran out, but the entry is not its own now");
            assertEquals(List.of(entry("Echo", "e1", 30)), first.lookup("Echo"));
            assertTrue(second.expire("Echo", "e1"));
            assertEquals(List.of(), second.lookup("Echo"));
            assertFalse(second.expire("Echo", "e1"), "gone already");
        }
    }

    /**
     * A component renews through one registry server and then the other, as its heartbeat does when
     * its first registry is slow or cut off for a moment (as MultiHostTest does across hosts): the
     * server renewed last holds the node, whether or not it still held a lease of its own, so that
     * the other one's lapsing lease never drops an entry that is being renewed.
     */
    @Test
    void aServerRenewedAgainTakesTheEntryBackAndTheOthersLapsedLeaseLeavesIt() throws Exception {
        try (ZooKeeperRegistryStore a = store("/t/back"); ZooKeeperRegistryStore b = store("/t/back")) {
            ManualClock clockA = new ManualClock();
            ManualClock clockB = new ManualClock();
            RegistryService first = new RegistryService(a, "s", clockA);
            RegistryService second = new RegistryService(b, "s", clockB);
            first.bind(Entries.toWire(entry("Echo", "e1", 3)), "s");
            assertTrue(a.heldHere("Echo", "e1"));

            assertTrue(second.renew("Echo", "e1", "s"), "one renew reaches the second server, which adopts the lease");
            assertEquals(b.sessionId(), a.curator().checkExists().forPath("/t/back/Echo/e1").getEphemeralOwner());
            assertFalse(a.heldHere("Echo", "e1"));

            // the renews come back to the first, whose own lease never ran out
            assertTrue(first.renew("Echo", "e1", "s"));
            assertTrue(a.heldHere("Echo", "e1"), "the node lives with the server renewed last");
            clockB.advance(Duration.ofSeconds(4));
            assertEquals(0, second.sweep(), "the second server's lapsed lease leaves the entry alone");
            assertEquals(1, first.lookup("Echo").size());

            clockA.advance(Duration.ofSeconds(2));
            assertTrue(first.renew("Echo", "e1", "s"));
            clockA.advance(Duration.ofSeconds(2));
            assertEquals(0, first.sweep(), "renewed 2 s ago: its lease runs");
            clockA.advance(Duration.ofSeconds(2));
            assertEquals(1, first.sweep(), "not renewed for 4 s: it goes");
            assertEquals(List.of(), a.lookup("Echo"), "gone at once for the server that removed it");
            // the other server reads its cache, which hears of another server's write a moment later
            await("the other server's lookups show the removal", Duration.ofSeconds(10), () -> b.lookup("Echo").isEmpty());
        }
    }

    /**
     * A take-over moves the node to another session by a delete and a create in one transaction;
     * watchers must not see the instance go and come back (MultiHostTest saw GO and APPEAR on every
     * take-over, and the client's replica set lost the instance for a moment). A real removal is
     * still reported.
     */
    /** A sink that writes each report as {@code bound:ID:LEASE} or {@code gone:ID}. */
    private static RegistryStore.ChangeSink recording(List<String> changes) {
        return new RegistryStore.ChangeSink() {
            @Override
            public void bound(ComponentEntry entry) {
                changes.add("bound:" + entry.instanceId() + ":" + entry.leaseSeconds());
            }

            @Override
            public void gone(String name, String instanceId) {
                changes.add("gone:" + instanceId);
            }
        };
    }

    @Test
    void aTakeOverIsReportedAsAChangeNotAsGoneAndBack() throws Exception {
        try (ZooKeeperRegistryStore a = store("/t/moves"); ZooKeeperRegistryStore b = store("/t/moves");
             ZooKeeperRegistryStore watched = store("/t/moves")) {
            List<String> changes = new CopyOnWriteArrayList<>();
            watched.reportChanges(recording(changes));
            a.bind(entry("Echo", "e1", 30));
            await("the bind is reported", Duration.ofSeconds(10), () -> changes.contains("bound:e1:30"));
            b.rebind(entry("Echo", "e1", 31));   // taken over by the other server, under its session
            await("the take-over is reported", Duration.ofSeconds(10), () -> changes.contains("bound:e1:31"));
            // the take-over deleted and re-created the node: the store looks again later, and only
            // that second look could still report it gone
            await("the store's second look at the node", Duration.ofSeconds(10), () -> watched.secondLooksDone() >= 1);
            assertEquals(List.of("bound:e1:30", "bound:e1:31"), changes);
            assertTrue(b.expire("Echo", "e1"));
            await("the removal is reported", Duration.ofSeconds(10), () -> changes.contains("gone:e1"));
        }
    }

    /**
     * A lookup never misses an instance whose node another registry server takes over (one
     * transaction, which a cache reports as a delete and then a create). The observing store's
     * cache listener is held at each event in turn, where the cache and the index its listener
     * keeps disagree: every lookup still gives the instance, read from ZooKeeper while the node
     * moves, and from the cache again once it has moved.
     */
    @Test
    void anInstanceTakenOverByAnotherRegistryIsInEveryLookupWhileItsNodeMoves() throws Exception {
        try (ZooKeeperRegistryStore a = store("/t/moving"); ZooKeeperRegistryStore b = store("/t/moving");
             ZooKeeperRegistryStore observer = store("/t/moving")) {
            List<String> changes = reportingAfterFirstBind(observer, a);
            String path = "/t/moving/Echo/e1";
            a.bind(entry("Other", "o1", 30));
            await("the other name in the observer's cache", Duration.ofSeconds(10), () -> {
                List<ComponentEntry> now = observer.lookupNow("Other");
                return now != null && ids(now).equals(List.of("o1"));
            });
            HeldEvent deleted = holdCacheEvent(observer, CuratorCacheListener.Type.NODE_DELETED, path);
            b.rebind(entry("Echo", "e1", 30));   // the same entry, now under b's session
            deleted.awaitReached();
            assertEquals(List.of("e1"), ids(observer.lookup("Echo")), "the cache deleted the node; its listener has not heard");
            int listsFromCache = observer.listsFromCache();
            int namesRead = observer.namesReadForLists();
            assertEquals(List.of("e1", "o1"), ids(observer.list()), "nor is it missing from a list");
            // the cache may hold the new node already (its create waits behind the held delete)
            assertEquals(listsFromCache + 1, observer.listsFromCache(), "listed from the cache");
            assertTrue(observer.namesReadForLists() <= namesRead + 1, "no name but the moving one read from ZooKeeper");

            HeldEvent created = holdCacheEvent(observer, CuratorCacheListener.Type.NODE_CREATED, path);
            deleted.release();
            created.awaitReached();
            int fromCache = observer.lookupsFromCache();
            assertEquals(null, observer.lookupNow("Echo"), "the cache cannot answer at once while the node moves");
            assertEquals(List.of("e1"), ids(observer.lookup("Echo")), "the cache holds the new node; its listener has not heard");
            assertEquals(fromCache, observer.lookupsFromCache(), "read from ZooKeeper, not from the cache");
            namesRead = observer.namesReadForLists();
            assertEquals(List.of("e1", "o1"), ids(observer.list()), "nor is it missing from a list");
            assertEquals(List.of(listsFromCache + 2, namesRead + 1), List.of(observer.listsFromCache(),
                    observer.namesReadForLists()), "listed from the cache, the moving name read from ZooKeeper");
            // the store's second look at the node, due 2 s after the delete, may come now: the
            // cache holds the node and its create waits for the listener
            observer.lookAgain(recording(changes), path);
            assertEquals(null, observer.lookupNow("Echo"), "the move is not over until the listener hears the create");
            assertEquals(List.of("e1"), ids(observer.lookup("Echo")));
            created.release();

            await("lookups come from the cache again", Duration.ofSeconds(10), () -> observer.lookupNow("Echo") != null);
            assertEquals(List.of("e1"), ids(observer.lookupNow("Echo")));
            assertEquals(List.of("e1", "o1"), ids(observer.list()));
            assertEquals(namesRead + 1, observer.namesReadForLists(), "once the move is over, no name is read");
            assertEquals(b.sessionId(), observer.curator().checkExists().forPath(path).getEphemeralOwner());
            assertEquals(List.of("bound:e1:30", "bound:o1:30", "bound:e1:30"), changes, "a change, never gone and back");
        }
    }

    /**
     * A lookup that reads ZooKeeper while one of its name's nodes moves decodes that node only: the
     * others are as the cache decoded them (an entry holds its interface's schema, kilobytes of XML).
     */
    @Test
    void aLookupReadFromZooKeeperWhileANodeMovesDecodesOnlyThatNode() throws Exception {
        try (ZooKeeperRegistryStore a = store("/t/decoding"); ZooKeeperRegistryStore b = store("/t/decoding");
             ZooKeeperRegistryStore observer = store("/t/decoding")) {
            observer.reportChanges(recording(new CopyOnWriteArrayList<>()));
            for (String id : List.of("e1", "e2", "e3")) {
                a.bind(entry("Echo", id, 30));
            }
            await("the name's three instances in the observer's cache", Duration.ofSeconds(10), () -> {
                List<ComponentEntry> now = observer.lookupNow("Echo");
                return now != null && now.size() == 3;
            });
            String path = "/t/decoding/Echo/e1";
            HeldEvent created = holdCacheEvent(observer, CuratorCacheListener.Type.NODE_CREATED, path);
            b.rebind(entry("Echo", "e1", 30));   // the same entry, now under b's session
            created.awaitReached();
            long decoded = observer.nodesDecoded();
            int fromCache = observer.lookupsFromCache();

            assertEquals(List.of("e2", "e3", "e1"), ids(observer.lookup("Echo")), "oldest first: e1's node is new");

            assertEquals(fromCache, observer.lookupsFromCache(), "read from ZooKeeper while the node moves");
            assertEquals(decoded + 1, observer.nodesDecoded(), "the moved node decoded, the other two as they were");
            created.release();
            await("lookups come from the cache again", Duration.ofSeconds(10), () -> observer.lookupNow("Echo") != null);
            assertEquals(List.of("e2", "e3", "e1"), ids(observer.lookupNow("Echo")));
            assertEquals(decoded + 1, observer.nodesDecoded(), "nor is it decoded again for the cache");
        }
    }

    /**
     * Instances moving back and forth between two registries' sessions, 200 moves, while a third
     * lists and looks them up as fast as it can: every list holds all 20 and every lookup its
     * name's 4, whichever step of a move its cache is at, and its watchers never hear one go.
     */
    @Test
    void listsAndLookupsDuringManyMovesNeverMissAnInstance() throws Exception {
        try (ZooKeeperRegistryStore a = store("/t/churn"); ZooKeeperRegistryStore b = store("/t/churn");
             ZooKeeperRegistryStore observer = store("/t/churn")) {
            List<String> changes = new CopyOnWriteArrayList<>();
            observer.reportChanges(recording(changes));
            for (int i = 0; i < 20; i++) {
                a.bind(entry("Name" + i % 5, "i" + i, 30));
            }
            await("every instance in the observer's cache", Duration.ofSeconds(10), () -> {
                List<ComponentEntry> now = observer.lookupNow("Name4");
                return now != null && now.size() == 4;
            });
            CompletableFuture<Void> moving = CompletableFuture.runAsync(() -> {
                try {
                    for (int round = 0; round < 10; round++) {
                        ZooKeeperRegistryStore to = round % 2 == 0 ? b : a;
                        for (int i = 0; i < 20; i++) {
                            to.rebind(entry("Name" + i % 5, "i" + i, 30));
                        }
                    }
                } catch (Exception e) {
                    throw new CompletionException(e);
                }
            });
            int lists = 0;
            while (!moving.isDone()) {
                List<ComponentEntry> all = observer.list();
                assertEquals(20, all.size(), "list " + lists + ": " + ids(all));
                String name = "Name" + lists % 5;
                List<ComponentEntry> some = observer.lookup(name);
                assertEquals(4, some.size(), "lookup of " + name + ": " + ids(some));
                lists++;
            }
            moving.join();
            System.out.printf("%d lists and lookups during 200 moves; %d lists from the cache read %d names from ZooKeeper%n",
                    lists, observer.listsFromCache(), observer.namesReadForLists());
            assertEquals(20, observer.list().size());
            assertEquals(List.of(), changes.stream().filter(c -> c.startsWith("gone:")).toList(), "watchers told of none gone");
        }
    }

    /**
     * A watchers' sink that throws on every change leaves the store's own bookkeeping alone: the
     * index of each name's instances follows binds and unbinds, and lookups are answered from the
     * cache (without it, a failed report of a delete left the node in the index, and every lookup
     * of the name read ZooKeeper from then on).
     */
    @Test
    void aWatchersSinkThatFailsLeavesLookupsFromTheCacheRight() throws Exception {
        try (ZooKeeperRegistryStore writer = store("/t/failing"); ZooKeeperRegistryStore reader = store("/t/failing")) {
            AtomicInteger told = new AtomicInteger();
            reader.reportChanges(new RegistryStore.ChangeSink() {
                @Override
                public void bound(ComponentEntry entry) {
                    told.incrementAndGet();
                    throw new IllegalStateException("a watcher failed");
                }

                @Override
                public void gone(String name, String instanceId) {
                    told.incrementAndGet();
                    throw new IllegalStateException("a watcher failed");
                }
            });
            writer.bind(entry("Echo", "e1", 30));
            await("the bind in the reader's cache", Duration.ofSeconds(10), () -> {
                List<ComponentEntry> now = reader.lookupNow("Echo");
                return now != null && ids(now).equals(List.of("e1"));
            });
            writer.unbind("Echo", "e1");
            await("the watchers told of the bind and the unbind", Duration.ofSeconds(10), () -> told.get() >= 2);
            int fromCache = reader.lookupsFromCache();
            await("the unbind in the reader's cache", Duration.ofSeconds(10), () -> {
                List<ComponentEntry> now = reader.lookupNow("Echo");
                return now != null && now.isEmpty();
            });
            assertTrue(reader.lookupsFromCache() > fromCache, "answered from the cache");
        }
    }

    /** A cache event held on the thread that reports it, until {@link #release}. */
    private record HeldEvent(CountDownLatch reached, CountDownLatch released) {
        void awaitReached() throws InterruptedException {
            assertTrue(reached.await(10, TimeUnit.SECONDS), "the cache reported the event");
        }

        void release() {
            released.countDown();
        }
    }

    /** Holds {@code store}'s cache listener at the start of the next {@code type} event for {@code path}. */
    private static HeldEvent holdCacheEvent(ZooKeeperRegistryStore store, CuratorCacheListener.Type type, String path) {
        HeldEvent held = new HeldEvent(new CountDownLatch(1), new CountDownLatch(1));
        store.onCacheEvent = (t, p) -> {
            if (t == type && p.equals(path) && held.reached().getCount() > 0) {
                held.reached().countDown();
                try {
                    held.released().await(30, TimeUnit.SECONDS);
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                }
            }
        };
        return held;
    }

    /**
     * The watch contract on ZooKeeper: changes that follow each other faster than a store reads
     * them are folded, in order, into the final state. The watching store's ZooKeeper event thread
     * is held (as a pause or a loaded CPU would hold it) while the instance is rebound and
     * unbound; the store reads the node only afterwards, so the rebound state is never reported,
     * and the instance ends gone before anything bound later is reported.
     */
    @Test
    void changesFasterThanAWatchingStoreReadsAreFoldedIntoTheFinalStateInOrder() throws Exception {
        try (ZooKeeperRegistryStore writer = store("/t/fold"); ZooKeeperRegistryStore watched = store("/t/fold")) {
            List<String> changes = reportingAfterFirstBind(watched, writer);
            CountDownLatch release = holdEventThread(watched, writer, "/t/fold-pause");
            try {
                writer.rebind(entry("Echo", "e1", 31));
                writer.unbind("Echo", "e1");
                writer.bind(entry("Echo", "marker", 30));
            } finally {
                release.countDown();
            }
            await("the later bind is reported", Duration.ofSeconds(10), () -> changes.contains("bound:marker:30"));
            assertEquals(List.of("bound:e1:30", "gone:e1", "bound:marker:30"), changes);
        }
    }

    /**
     * Lookups come from a server's cache, which shows this server's own writes at once and another
     * server's once it has heard of them. The reading store's ZooKeeper event thread is held (as a
     * pause or a loaded CPU would hold it) while another store binds: its lookups still give the
     * instances from before, and the new one once the thread goes on. So a test that asks one
     * registry server for what another just wrote waits for it.
     */
    @Test
    void anotherStoresBindShowsInALookupOnceThisStoresCacheHasHeardOfIt() throws Exception {
        try (ZooKeeperRegistryStore writer = store("/t/lag"); ZooKeeperRegistryStore reader = store("/t/lag")) {
            reportingAfterFirstBind(reader, writer);
            assertEquals(List.of("e1"), ids(reader.lookup("Echo")));

            CountDownLatch release = holdEventThread(reader, writer, "/t/lag-pause");
            try {
                writer.bind(entry("Echo", "e2", 30));
                assertEquals(List.of("e1", "e2"), ids(writer.lookup("Echo")), "the writer's own bind shows at once");
                assertEquals(List.of("e1"), ids(reader.lookup("Echo")), "the reader's cache has not heard of it");
            } finally {
                release.countDown();
            }
            await("the reader's lookups show the bind once its cache has heard of it", Duration.ofSeconds(10),
                    () -> ids(reader.lookup("Echo")).equals(List.of("e1", "e2")));
        }
    }

    /**
     * Has {@code watched} report its changes, then {@code writer} bind Echo e1, and waits until
     * {@code watched} has reported that bind: its cache has heard of it. The changes reported.
     */
    private static List<String> reportingAfterFirstBind(ZooKeeperRegistryStore watched, ZooKeeperRegistryStore writer)
            throws Exception {
        List<String> changes = new CopyOnWriteArrayList<>();
        watched.reportChanges(recording(changes));
        writer.bind(entry("Echo", "e1", 30));
        await("the first bind is reported", Duration.ofSeconds(10), () -> changes.contains("bound:e1:30"));
        return changes;
    }

    /**
     * Holds {@code held}'s ZooKeeper event thread (as a pause or a loaded CPU would hold it) in a
     * watcher on {@code path}, which {@code other} creates and changes, until the latch returned
     * is counted down: {@code held}'s cache hears of nothing meanwhile.
     */
    private static CountDownLatch holdEventThread(ZooKeeperRegistryStore held, ZooKeeperRegistryStore other, String path)
            throws Exception {
        CountDownLatch holding = new CountDownLatch(1);
        CountDownLatch release = new CountDownLatch(1);
        other.curator().create().forPath(path);
        held.curator().getData().usingWatcher((CuratorWatcher) event -> {
            holding.countDown();
            release.await();
        }).forPath(path);
        other.curator().setData().forPath(path, new byte[] {1});
        assertTrue(holding.await(10, TimeUnit.SECONDS), "the store's event thread is held");
        return release;
    }

    private static List<String> ids(List<ComponentEntry> entries) {
        return entries.stream().map(ComponentEntry::instanceId).toList();
    }

    @Test
    void storeOperationsAndTheEphemeralOrPersistentChoice() throws Exception {
        try (ZooKeeperRegistryStore a = store("/t/ops"); ZooKeeperRegistryStore b = store("/t/ops")) {
            a.bind(entry("Echo", "e1", 30));
            a.bind(entry("Echo", "e2", 0));
            assertThrows(RegistryStore.AlreadyBoundException.class, () -> b.bind(entry("Echo", "e1", 30)));
            assertEquals(List.of(entry("Echo", "e1", 30), entry("Echo", "e2", 0)), b.lookup("Echo"),
                    "every field comes back, oldest first");
            Stat leased = a.curator().checkExists().forPath("/t/ops/Echo/e1");
            Stat forever = a.curator().checkExists().forPath("/t/ops/Echo/e2");
            assertEquals(a.sessionId(), leased.getEphemeralOwner(), "a leased entry is an ephemeral node of its session");
            assertEquals(0, forever.getEphemeralOwner(), "an entry without a lease is persistent");

            b.rebind(entry("Echo", "e1", 60));
            assertEquals(60, a.find("Echo", "e1").orElseThrow().leaseSeconds());
            assertEquals(b.sessionId(), a.curator().checkExists().forPath("/t/ops/Echo/e1").getEphemeralOwner(),
                    "a rebind moves the node to the rebinding store's session");
            assertEquals(2, a.list().size());
            assertEquals(2, b.unbind("Echo", null));
            assertTrue(a.lookup("Echo").isEmpty());
            assertEquals(0, a.unbind("Nothing", "x"));
        }
    }

    @Test
    void twoRegistryServersOnOneZooKeeperSeeEachOthersBinds() throws Exception {
        try (RegistryServer one = RegistryServer.builder().store(store("/t/shared")).secret("s").start();
             RegistryServer two = RegistryServer.builder().store(store("/t/shared")).secret("s").start();
             RegistryClient viaOne = RegistryClient.connect(one.endpoint(), "s");
             RegistryClient viaTwo = RegistryClient.connect(two.endpoint(), "s")) {
            viaOne.bind(entry("Echo", "e1", 30));
            viaTwo.bind(entry("Echo", "e2", 30));
            // a server's lookups show its own writes at once, and another server's once its cache heard of them
            assertEquals(List.of("e1", "e2"), ids(viaTwo.lookup("Echo")));
            await("the first server's cache hears of the second's bind", Duration.ofSeconds(10),
                    () -> ids(viaOne.lookup("Echo")).equals(List.of("e1", "e2")));
            assertTrue(viaTwo.renew("Echo", "e1"), "a renew through the other server finds the entry");
            assertEquals(1, viaTwo.unbind("Echo", "e1"));
            assertEquals(List.of("e2"), ids(viaTwo.lookup("Echo")));
            await("the first server's cache hears of the second's unbind", Duration.ofSeconds(10),
                    () -> ids(viaOne.lookup("Echo")).equals(List.of("e2")));
            try (RegistryClient intruder = RegistryClient.connect(two.endpoint(), "wrong")) {
                assertEquals("unauthorized", assertThrows(RegistryException.class,
                        () -> intruder.unbind("Echo", null)).code());
            }
            assertEquals(1, viaOne.list().size());
        }
    }

    /**
     * A watch over two registries whose first is cut off while a poll waits there (a black hole:
     * the connection stays open, nothing comes back) moves to the second within its short wait and
     * the answer's margin, not a poll's full wait plus the call's timeout.
     */
    @Test
    void aWatchOnACutRegistryMovesToTheNextWithinItsWaitAndCallTimeout() throws Exception {
        // SOAP long polls (no stream): the line sits in front of the first registry's SOAP port
        try (RegistryServer one = RegistryServer.builder().store(store("/t/watch")).secret("s").watchStream(false).start();
             RegistryServer two = RegistryServer.builder().store(store("/t/watch")).secret("s").watchStream(false).start();
             FaultProxy line = FaultProxy.to(URI.create(one.endpoint()).getHost(), URI.create(one.endpoint()).getPort());
             RegistryClient viaTwo = RegistryClient.connect(two.endpoint(), "s");
             RegistryClient both = RegistryClient.connect(List.of(one.endpoint().replaceFirst(
                     ":" + URI.create(one.endpoint()).getPort() + "/", ":" + line.port() + "/"), two.endpoint()), null,
                     ClientSettings.defaults().withCallTimeout(Duration.ofSeconds(2)))) {
            List<String> seen = new CopyOnWriteArrayList<>();
            try (RegistryWatch watch = RegistryWatch.start(both, List.of("Echo"),
                    e -> seen.add(e.kind() + ":" + e.instanceId()))) {
                assertTrue(watch.awaitSynced(Duration.ofSeconds(10)));
                viaTwo.bind(entry("Echo", "e1", 0));
                await("the first registry reports e1", Duration.ofSeconds(10), () -> seen.contains("APPEAR:e1"));
                line.blackHole();
                long cut = System.nanoTime();
                viaTwo.bind(entry("Echo", "e2", 0));
                await("the watch moves to the second registry", Duration.ofSeconds(20), () -> seen.contains("APPEAR:e2"));
                double took = (System.nanoTime() - cut) / 1e9;
                assertTrue(took < RegistryClient.FAILOVER_WATCH_SECONDS + 2 + 3, "noticed the cut after " + took + " s");
            }
        }
    }

    @Test
    void aKilledRegistrysLeasedEntriesGoWhenItsSessionExpires() throws Exception {
        try (RegistryServer survivor = RegistryServer.builder().store(store("/t/kill")).start();
             RegistryClient reader = RegistryClient.connect(survivor.endpoint());
             ChildJvm child = ChildJvm.start(dir.resolve("registry.err"), ZooKeeperRegistryMain.class,
                     zookeeper.getConnectString(), "/t/kill", Long.toString(SESSION.toMillis()))) {
            String url = child.await("registry");
            try (RegistryClient viaChild = RegistryClient.connect(url, "s")) {
                viaChild.bind(entry("Leased", "l1", 600));
                viaChild.bind(entry("Durable", "d1", 0));
            }
            assertEquals(1, reader.lookup("Leased").size());
            child.kill();
            long killed = System.nanoTime();
            await("the killed registry's ephemeral entry goes", SESSION.multipliedBy(4),
                    () -> reader.lookup("Leased").isEmpty());
            assertTrue(System.nanoTime() - killed > SESSION.toNanos() / 2, "it went with the session, not before");
            assertEquals(1, reader.lookup("Durable").size(), "an entry without a lease stays");
        }
    }

    @Test
    void afterASessionExpiryTheEntriesComeBackUnderTheNewSession() throws Exception {
        try (ZooKeeperRegistryStore store = store("/t/expiry"); ZooKeeperRegistryStore observer = store("/t/expiry")) {
            store.bind(entry("Echo", "e1", 30));
            store.rebind(entry("Echo", "e2", 30));
            ZooKeeper zk = store.curator().getZookeeperClient().getZooKeeper();
            long old = zk.getSessionId();
            byte[] password = zk.getSessionPasswd();
            // the client is told its session expired, but the server still holds the old session and
            // its ephemeral nodes: here for as long as a second connection keeps it alive (in life,
            // until the server notices). The store must not trust those nodes: they go when it does.
            KillSession.kill(zk);
            ZooKeeper oldSession = new ZooKeeper(zookeeper.getConnectString(), (int) SESSION.toMillis(), event -> { },
                    old, password);
            try {
                await("a new session", Duration.ofSeconds(10), () -> store.sessionId() != old);
                await("both nodes owned by the new session", Duration.ofSeconds(10),
                        () -> owners(observer, store.sessionId()));
            } finally {
                // ends the old session: returns once the server closed it, which deletes the
                // session's ephemeral nodes in the same step, so what is read below is after that
                oldSession.close();
            }
            assertTrue(owners(observer, store.sessionId()), "the nodes outlive the old session");
            assertEquals(List.of("e1", "e2"), observer.lookup("Echo").stream().map(ComponentEntry::instanceId).toList());
            assertNotEquals(old, store.sessionId());
        }
    }

    @Test
    void aLeasedEntryWhoseRestoreFailedIsRestoredAgainBeforeItsRenewal() throws Exception {
        try (ZooKeeperRegistryStore store = store("/t/retry"); ZooKeeperRegistryStore observer = store("/t/retry")) {
            store.bind(entry("Echo", "e1", 30));
            store.bind(entry("Echo", "e2", 30));
            AtomicInteger refusals = new AtomicInteger(3);
            AtomicInteger tries = new AtomicInteger();
            store.beforeRestore = path -> {
                if (path.equals("/t/retry/Echo/e1")) {
                    tries.incrementAndGet();
                    if (refusals.getAndDecrement() > 0) {
                        throw new RegistryStore.StoreException("refused by the test");
                    }
                }
            };
            long old = store.sessionId();
            KillSession.kill(store.curator().getZookeeperClient().getZooKeeper());
            await("a new session", Duration.ofSeconds(10), () -> store.sessionId() != old);
            // no renewal, no bind and no further connection event from here on: only the store's retry
            await("e1 written under the new session", Duration.ofSeconds(10),
                    () -> owner(observer, "/t/retry/Echo/e1") == store.sessionId());
            assertEquals(4, tries.get(), "three refused tries, then the one that wrote it");
            assertEquals(0, store.unrestored());
            assertEquals(store.sessionId(), owner(observer, "/t/retry/Echo/e2"), "e2 restored at once");
            assertEquals(List.of("e1", "e2"), observer.lookup("Echo").stream().map(ComponentEntry::instanceId).sorted().toList());
        }
    }

    @Test
    void aRestoreStillFailingStopsWhenItsEntryIsUnbound() throws Exception {
        try (ZooKeeperRegistryStore store = store("/t/retry-unbind"); ZooKeeperRegistryStore observer = store("/t/retry-unbind")) {
            store.bind(entry("Echo", "e1", 30));
            AtomicInteger tries = new AtomicInteger();
            store.beforeRestore = path -> {
                tries.incrementAndGet();
                throw new RegistryStore.StoreException("refused by the test");
            };
            long old = store.sessionId();
            KillSession.kill(store.curator().getZookeeperClient().getZooKeeper());
            await("a new session", Duration.ofSeconds(10), () -> store.sessionId() != old);
            await("a retry", Duration.ofSeconds(10), () -> tries.get() >= 2);
            assertEquals(1, store.unrestored());
            store.unbind("Echo", "e1");
            assertEquals(0, store.unrestored(), "an unbound entry is not owed to ZooKeeper any more");
            int triesAtUnbind = tries.get();
            store.bind(entry("Echo", "e2", 30));   // a write under the new session, through the same lock
            assertEquals(triesAtUnbind, tries.get(), "no restore of e1 after its unbind");
            await("the old session's node gone", Duration.ofSeconds(10),
                    () -> observer.lookup("Echo").stream().map(ComponentEntry::instanceId).toList().equals(List.of("e2")));
        }
    }

    private static long owner(ZooKeeperRegistryStore observer, String path) {
        try {
            Stat s = observer.curator().checkExists().forPath(path);
            return s == null ? 0 : s.getEphemeralOwner();
        } catch (Exception e) {
            return 0;
        }
    }

    @Test
    void aNodeTakenOverByAnotherRegistryIsLeftToItAfterASessionExpiry() throws Exception {
        try (ZooKeeperRegistryStore a = store("/t/takeover"); ZooKeeperRegistryStore b = store("/t/takeover")) {
            a.bind(entry("Echo", "e1", 30));
            b.rebind(entry("Echo", "e1", 45));   // b now owns the instance
            long old = a.sessionId();
            KillSession.kill(a.curator().getZookeeperClient().getZooKeeper());
            // the store notes a new session and restores its nodes in one step that sessionId() waits
            // for: once it names the new session, the restore is over
            await("a new session for a", Duration.ofSeconds(10), () -> a.sessionId() != old);
            assertEquals(b.sessionId(), a.curator().checkExists().forPath("/t/takeover/Echo/e1").getEphemeralOwner());
            assertEquals(45, a.find("Echo", "e1").orElseThrow().leaseSeconds());
        }
    }

    @Test
    void connectionLossIsAClearErrorAndAZooKeeperRestartIsSurvived() throws Exception {
        try (ZooKeeperRegistryStore store = store("/t/restart")) {
            store.bind(entry("Echo", "e1", 30));
            store.bind(entry("Durable", "d1", 0));
            zookeeper.stop();
            RegistryStore.StoreException e = assertThrows(RegistryStore.StoreException.class,
                    () -> store.bind(entry("Echo", "e2", 30)));
            assertTrue(e.getMessage().contains(zookeeper.getConnectString()) && e.getMessage().contains("cannot be reached"),
                    e.getMessage());
            Thread.sleep(SESSION.multipliedBy(2).toMillis());   // a time to pass (the session expires), not an event
            zookeeper.restart();
            try (ZooKeeperRegistryStore observer = store("/t/restart")) {
                await("the leased entry is back", Duration.ofSeconds(20), () -> observer.lookup("Echo").size() == 1);
                assertEquals(List.of("d1"), observer.lookup("Durable").stream().map(ComponentEntry::instanceId).toList());
                assertTrue(observer.lookup("Echo").stream().noneMatch(x -> x.instanceId().equals("e2")),
                        "the failed bind changed nothing");
            }
        }
    }

    @Test
    void anUnreachableEnsembleFailsToStartWithItsAddress() {
        RegistryStore.StoreException e = assertThrows(RegistryStore.StoreException.class,
                () -> ZooKeeperRegistryStore.builder("127.0.0.1:1,127.0.0.1:2").connectionTimeout(Duration.ofMillis(500))
                        .start());
        assertTrue(e.getMessage().contains("127.0.0.1:1,127.0.0.1:2"), e.getMessage());
        assertThrows(IllegalArgumentException.class, () -> ZooKeeperRegistryStore.builder("x:1").root("no-slash"));
    }

    private static boolean owners(ZooKeeperRegistryStore observer, long session) {
        try {
            for (String id : List.of("e1", "e2")) {
                Stat s = observer.curator().checkExists().forPath("/t/expiry/Echo/" + id);
                if (s == null || s.getEphemeralOwner() != session) {
                    return false;
                }
            }
            return true;
        } catch (Exception e) {
            throw new IllegalStateException(e);
        }
    }

    /** Reports changes to nowhere but counts down {@code last} when {@code lastInstance} is bound. */
    private static RegistryStore.ChangeSink until(String lastInstance, CountDownLatch last) {
        return new RegistryStore.ChangeSink() {
            @Override
            public void bound(ComponentEntry entry) {
                if (entry.instanceId().equals(lastInstance)) {
                    last.countDown();
                }
            }

            @Override
            public void gone(String name, String instanceId) {
            }
        };
    }

    /**
     * {@code list} from the store's cache: the same entries, in the same order, as reading every
     * node, whether the writes came from this store or another on the same ensemble.
     */
    @Test
    void writesOfAnotherStoreListTheSameFromTheCacheAsFromTheNodes() throws Exception {
        try (ZooKeeperRegistryStore cached = store("/t/list"); ZooKeeperRegistryStore other = store("/t/list")) {
            CountDownLatch sentinel = new CountDownLatch(1);
            cached.reportChanges(until("last", sentinel));
            for (int i = 0; i < 60; i++) {
                other.bind(entry("Name" + (i % 6), "i" + i, i % 2 == 0 ? 0 : 30));
            }
            for (int i = 0; i < 60; i += 7) {
                other.rebind(entry("Name" + (i % 6), "i" + i, i % 2 == 0 ? 30 : 0));   // leased or made persistent
            }
            for (int i = 1; i < 60; i += 5) {
                other.unbind("Name" + (i % 6), "i" + i);
            }
            other.unbind("Name5", null);                                       // a whole name
            // the cache hears of changes in ZooKeeper's order: once the last is in, so is the rest
            other.bind(entry("Zlast", "last", 0));
            assertTrue(sentinel.await(30, TimeUnit.SECONDS), "the cache did not hear the last bind");

            int before = cached.listsFromCache();
            List<ComponentEntry> fromCache = cached.list();
            assertEquals(before + 1, cached.listsFromCache(), "the cache answered");
            List<ComponentEntry> read = other.readList();
            assertEquals(read, fromCache, "the cache's list is the nodes' list, entry for entry and in order");
            assertEquals(read.size(), cached.size(), "the cache counts what it lists, names' nodes not among them");
            assertTrue(fromCache.contains(entry("Zlast", "last", 0)), "the last bind is listed");
            assertTrue(fromCache.stream().noneMatch(e -> e.name().equals("Name5")), "the name unbound is not listed");
            int lookupsBefore = cached.lookupsFromCache();
            for (int n = 0; n < 6; n++) {
                assertEquals(other.lookup("Name" + n), cached.lookup("Name" + n), "Name" + n + " from the cache as from the nodes");
            }
            assertEquals(lookupsBefore + 6, cached.lookupsFromCache(), "the cache answered the lookups");
        }
    }

    @Test
    void aListRightAfterThisStoresWriteShowsTheWrite() throws Exception {
        try (ZooKeeperRegistryStore store = store("/t/own")) {
            CountDownLatch loaded = new CountDownLatch(1);
            store.reportChanges(until("first", loaded));
            store.bind(entry("Own", "first", 0));
            assertTrue(loaded.await(30, TimeUnit.SECONDS));
            for (int i = 0; i < 40; i++) {
                ComponentEntry bound = entry("Own", "o" + i, 0);
                store.bind(bound);
                List<ComponentEntry> now = store.list();
                assertTrue(now.contains(bound), "a list right after bind " + i + " misses it");
                assertEquals(i + 2, now.size(), now.toString());
                if (i % 2 == 0) {
                    assertEquals(1, store.unbind("Own", "o" + i));
                    assertTrue(!store.list().contains(bound), "a list right after unbind " + i + " still shows it");
                    assertTrue(!store.lookup("Own").contains(bound), "a lookup right after unbind " + i + " still shows it");
                    store.bind(bound);
                }
                assertEquals(now, store.lookup("Own"), "a lookup right after bind " + i + ", oldest first");
            }
            assertTrue(store.listsFromCache() > 0, "the cache answered some of them");
            assertTrue(store.lookupsFromCache() > 0, "the cache answered some lookups");
            assertEquals(store.readList(), store.list());
            // at once: the write or nothing (the caller then waits), never the state before it
            for (int i = 0; i < 20; i++) {
                ComponentEntry bound = entry("Now", "n" + i, 0);
                store.bind(bound);
                List<ComponentEntry> now = store.lookupNow("Now");
                if (now != null) {
                    assertTrue(now.contains(bound), "a lookup at once right after bind " + i + " misses it");
                    assertEquals(i + 1, now.size(), now.toString());
                }
            }
            List<ComponentEntry> waited = store.lookup("Now");   // waits until the cache shows this store's writes
            assertEquals(20, waited.size());
            assertEquals(waited, store.lookupNow("Now"), "once the cache shows the writes it answers at once");
            assertTrue(store.lookupNow("Nobody") != null && store.lookupNow("Nobody").isEmpty(), "a name not bound: none, at once");
        }
    }

    /** Never a partial list from a cache that has not loaded yet or does not show this store's own write yet. */
    @Test
    void aCacheNotLoadedOrBehindThisStoresWriteIsNotListed() throws Exception {
        try (CuratorFramework client = CuratorFrameworkFactory.newClient(zookeeper.getConnectString(), new RetryOneTime(100))) {
            client.start();
            CuratorCache notStarted = CuratorCache.build(client, "/t/none");
            CacheListing listing = new CacheListing(notStarted);
            assertEquals(Optional.empty(), listing.listing(Duration.ofMillis(50)), "not loaded: no list, not an empty one");

            listing.initialized();
            assertTrue(listing.listing(Duration.ofMillis(50)).isPresent(), "loaded (empty) and nothing written");
            listing.wrote("/t/none/Echo/e1", 0);
            assertEquals(Optional.empty(), listing.listing(Duration.ofMillis(50)),
                    "the cache does not show this store's write: no list");
            Optional<CacheListing.Listing> after = listing.listing(Duration.ofMillis(50));
            assertTrue(after.isPresent(), "a write not shown within the wait is forgotten: the caller read the nodes");
        }
    }
}
