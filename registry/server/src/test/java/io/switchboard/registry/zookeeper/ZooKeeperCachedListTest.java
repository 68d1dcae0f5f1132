package io.switchboard.registry.zookeeper;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.switchboard.testing.conformance.ConformanceComponent;
import io.switchboard.protocol.Endpoint;
import io.switchboard.registry.ComponentEntry;
import io.switchboard.registry.store.RegistryStore;
import java.time.Duration;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import org.apache.curator.framework.CuratorFramework;
import org.apache.curator.framework.CuratorFrameworkFactory;
import org.apache.curator.framework.recipes.cache.ChildData;
import org.apache.curator.framework.recipes.cache.CuratorCache;
import org.apache.curator.retry.RetryOneTime;
import org.apache.curator.test.InstanceSpec;
import org.apache.curator.test.TestingServer;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * {@code list} on ZooKeeper from the store's cache: the same entries, in the same order, as reading
 * every node, whether the writes came from this store or another on the same ensemble; and never a
 * partial list from a cache that has not loaded yet or does not show this store's own write yet.
 */
class ZooKeeperCachedListTest {
    private static final Duration GENEROUS = Duration.ofSeconds(30);
    private TestingServer zookeeper;

    @BeforeEach
    void startZooKeeper() throws Exception {
        zookeeper = new TestingServer(new InstanceSpec(null, -1, -1, -1, true, -1, 200, -1), true);
    }

    @AfterEach
    void stopZooKeeper() throws Exception {
        zookeeper.close();
    }

    private ZooKeeperRegistryStore store(String root) {
        return ZooKeeperRegistryStore.builder(zookeeper.getConnectString()).root(root)
                .sessionTimeout(Duration.ofSeconds(5)).connectionTimeout(Duration.ofSeconds(5)).start();
    }

    private static ComponentEntry entry(String name, String instance, int port, int lease) {
        return new ComponentEntry(name, instance, List.of(new Endpoint("soap", "http://127.0.0.1:" + port
                + "/axis2/services/" + name)), ConformanceComponent.DESCRIPTOR.schema(), null, null, null, List.of(), lease);
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

    @Test
    void writesOfAnotherStoreListTheSameFromTheCacheAsFromTheNodes() throws Exception {
        try (ZooKeeperRegistryStore cached = store("/t/list"); ZooKeeperRegistryStore other = store("/t/list")) {
            CountDownLatch sentinel = new CountDownLatch(1);
            cached.reportChanges(until("last", sentinel));
            for (int i = 0; i < 60; i++) {
                other.bind(entry("Name" + (i % 6), "i" + i, 2000 + i, i % 2 == 0 ? 0 : 30));
            }
            for (int i = 0; i < 60; i += 7) {
                other.rebind(entry("Name" + (i % 6), "i" + i, 3000 + i, 0));   // moved and made persistent
            }
            for (int i = 1; i < 60; i += 5) {
                other.unbind("Name" + (i % 6), "i" + i);
            }
            other.unbind("Name5", null);                                       // a whole name
            // the cache hears of changes in ZooKeeper's order: once the last is in, so is the rest
            other.bind(entry("Zlast", "last", 9999, 0));
            assertTrue(sentinel.await(GENEROUS.toSeconds(), TimeUnit.SECONDS), "the cache did not hear the last bind");

            int before = cached.listsFromCache();
            List<ComponentEntry> fromCache = cached.list();
            assertEquals(before + 1, cached.listsFromCache(), "the cache answered");
            List<ComponentEntry> read = other.readList();
            assertEquals(read, fromCache, "the cache's list is the nodes' list, entry for entry and in order");
            assertTrue(fromCache.contains(entry("Zlast", "last", 9999, 0)), "the last bind is listed");
            assertTrue(fromCache.stream().noneMatch(e -> e.name().equals("Name5")), "the name unbound is not listed");
        }
    }

    @Test
    void aListRightAfterThisStoresWriteShowsTheWrite() throws Exception {
        try (ZooKeeperRegistryStore store = store("/t/own")) {
            CountDownLatch loaded = new CountDownLatch(1);
            store.reportChanges(until("first", loaded));
            store.bind(entry("Own", "first", 1000, 0));
            assertTrue(loaded.await(GENEROUS.toSeconds(), TimeUnit.SECONDS));
            for (int i = 0; i < 40; i++) {
                ComponentEntry bound = entry("Own", "o" + i, 1001 + i, 0);
                store.bind(bound);
                List<ComponentEntry> now = store.list();
                assertTrue(now.contains(bound), "a list right after bind " + i + " misses it");
                assertEquals(i + 2, now.size(), now.toString());
                if (i % 2 == 0) {
                    assertEquals(1, store.unbind("Own", "o" + i));
                    assertTrue(!store.list().contains(bound), "a list right after unbind " + i + " still shows it");
                    store.bind(bound);
                }
            }
            assertTrue(store.listsFromCache() > 0, "the cache answered some of them");
            assertEquals(store.readList(), store.list());
        }
    }

    @Test
    void aCacheNotLoadedOrBehindThisStoresWriteIsNotListed() throws Exception {
        try (CuratorFramework client = CuratorFrameworkFactory.newClient(zookeeper.getConnectString(), new RetryOneTime(100))) {
            client.start();
            CuratorCache notStarted = CuratorCache.build(client, "/t/none");
            CacheListing listing = new CacheListing(notStarted);
            assertEquals(Optional.empty(), listing.nodes(Duration.ofMillis(50)), "not loaded: no list, not an empty one");

            listing.initialized();
            assertTrue(listing.nodes(Duration.ofMillis(50)).isPresent(), "loaded (empty) and nothing written");
            listing.wrote("/t/none/Echo/e1", new byte[] {1});
            assertEquals(Optional.empty(), listing.nodes(Duration.ofMillis(50)),
                    "the cache does not show this store's write: no list");
            Optional<List<ChildData>> after = listing.nodes(Duration.ofMillis(50));
            assertTrue(after.isPresent(), "a write not shown within the wait is forgotten: the caller read the nodes");
        }
    }
}
