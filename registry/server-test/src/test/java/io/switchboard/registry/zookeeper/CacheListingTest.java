package io.switchboard.registry.zookeeper;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.stream.Stream;
import org.apache.curator.framework.listen.Listenable;
import org.apache.curator.framework.recipes.cache.ChildData;
import org.apache.curator.framework.recipes.cache.CuratorCache;
import org.apache.curator.framework.recipes.cache.CuratorCacheListener;
import org.apache.zookeeper.data.Stat;
import org.junit.jupiter.api.Test;

/**
 * When the store's cache may answer a lookup, over a cache this test changes by hand: each step
 * of a node's move (old node, none, new node) is a state the cache really passes through, held
 * here as long as the test likes.
 */
class CacheListingTest {
    private static final String NAME = "/t/Echo";
    private static final String E1 = NAME + "/e1";
    private static final String OTHER = "/t/Other/o1";
    private static final byte[] ENTRY = {1, 2, 3};

    private final HandCache cache = new HandCache();
    private final CacheListing listing = new CacheListing(cache);

    private void loadedWith(String path, long mzxid) {
        cache.put(path, ENTRY, mzxid);
        listing.indexed(true, path);
        listing.initialized();
    }

    @Test
    void aNodeThisStoreMovedWithTheSameBytesIsShownOnlyOnceTheCacheHoldsTheNewNode() throws Exception {
        loadedWith(E1, 5);
        assertEquals(List.of(E1), paths(listing.childrenNow(NAME)));
        listing.wrote(E1, 5);   // moved in one transaction after the node's last change, at zxid 5

        assertEquals(Optional.empty(), listing.childrenNow(NAME), "the cache holds the node the move replaced");
        cache.remove(E1);
        assertEquals(Optional.empty(), listing.childrenNow(NAME), "the cache deleted the node; the index still lists it");
        listing.indexed(false, E1);
        assertEquals(Optional.empty(), listing.childrenNow(NAME), "the cache and the index both lack the node");
        cache.put(E1, ENTRY, 9);
        assertEquals(Optional.empty(), listing.childrenNow(NAME), "the cache holds the new node; the index not yet");
        listing.indexed(true, E1);
        Optional<List<ChildData>> now = listing.childrenNow(NAME);
        assertEquals(List.of(E1), paths(now));
        assertEquals(9, now.get().get(0).getStat().getMzxid());
    }

    @Test
    void aWriteIsShownByItsVersionOrALaterOneWhateverTheBytes() throws Exception {
        loadedWith(E1, 5);
        listing.wrote(E1, 6);   // set at zxid 7: shown from mzxid 7 on
        cache.put(E1, new byte[] {9}, 6);
        assertEquals(Optional.empty(), listing.childrenNow(NAME), "an earlier version");
        cache.put(E1, new byte[] {8}, 12);   // another server's later change, other bytes
        assertEquals(List.of(E1), paths(listing.childrenNow(NAME)), "a later version shows the write too");
    }

    @Test
    void aNodeReappearingKeepsItsNameFromTheCacheUntilItIsReportedCreated() throws Exception {
        loadedWith(E1, 5);
        loadedWith("/t/Other/o1", 6);
        listing.reappearing(E1);   // another server moved it: the cache reported it deleted, ZooKeeper holds it
        assertEquals(Optional.empty(), listing.childrenNow(NAME));
        assertEquals(Optional.empty(), listing.children(NAME, Duration.ofMillis(10)));
        CacheListing.Listing all = listing.listing(Duration.ofMillis(10)).orElseThrow();
        assertEquals(Set.of(NAME), all.unsettled(), "a list reads that name from ZooKeeper");
        assertEquals(List.of("/t/Other/o1"), paths(all.nodes()), "and the others from the cache");
        assertEquals(List.of("/t/Other/o1"), paths(listing.childrenNow("/t/Other")), "other names are answered");
        assertEquals(List.of(), paths(listing.childrenNow("/t/Echo2")), "nor is a name that only begins alike held");

        assertTrue(listing.reappeared(E1));
        assertFalse(listing.reappeared(E1), "once");
        assertEquals(List.of(E1), paths(listing.childrenNow(NAME)));
        all = listing.listing(Duration.ofMillis(10)).orElseThrow();
        assertEquals(Set.of(), all.unsettled());
        assertEquals(List.of(E1, "/t/Other/o1"), paths(all.nodes()));
    }

    @Test
    void aListLeavesOutANameWhoseIndexListsANodeTheCacheDeleted() throws Exception {
        loadedWith(E1, 5);
        loadedWith(OTHER, 6);
        assertEquals(List.of(E1, OTHER), paths(listing.listing(Duration.ofMillis(10)).orElseThrow().nodes()));
        cache.remove(E1);   // another server's move: the cache deleted the node, its listener has not heard
        CacheListing.Listing all = listing.listing(Duration.ofMillis(10)).orElseThrow();
        assertEquals(Set.of(NAME), all.unsettled());
        assertEquals(List.of(OTHER), paths(all.nodes()));
        listing.indexed(false, E1);
        all = listing.listing(Duration.ofMillis(10)).orElseThrow();
        assertEquals(Set.of(), all.unsettled(), "deleted, as far as the cache and its index can tell");
        assertEquals(List.of(OTHER), paths(all.nodes()));
    }

    /**
     * The cache deleted a node; the list's look at the moving nodes finds none, and then, before
     * it walks the index, the listener begins the move and takes the node out of the index.
     * Without the count of moves begun, the list had neither the node nor its name unsettled.
     */
    @Test
    void aMoveBegunWhileAListWalksTheIndexLeavesItsNameToZooKeeper() throws Exception {
        loadedWith(E1, 5);
        loadedWith(OTHER, 6);
        cache.remove(E1);
        listing.beforeIndexWalk = () -> {
            listing.beforeIndexWalk = null;
            listing.reappearing(E1);
            listing.indexed(false, E1);
        };
        CacheListing.Listing all = listing.listing(Duration.ofMillis(10)).orElseThrow();
        assertEquals(Set.of(NAME), all.unsettled());
        assertEquals(List.of(OTHER), paths(all.nodes()));
    }

    /** The same for a lookup of the node's name: it reads ZooKeeper. A move under another name leaves it to the cache. */
    @Test
    void aMoveBegunWhileALookupWalksTheIndexSendsTheLookupToZooKeeper() throws Exception {
        loadedWith(E1, 5);
        loadedWith(NAME + "/e2", 6);
        loadedWith(OTHER, 7);
        listing.beforeIndexWalk = () -> {
            listing.beforeIndexWalk = null;
            listing.reappearing(OTHER);
        };
        assertEquals(List.of(E1, NAME + "/e2"), paths(listing.childrenNow(NAME)), "another name's move");
        assertTrue(listing.reappeared(OTHER));

        cache.remove(E1);
        listing.beforeIndexWalk = () -> {
            listing.beforeIndexWalk = null;
            listing.reappearing(E1);
            listing.indexed(false, E1);
        };
        assertEquals(Optional.empty(), listing.childrenNow(NAME));
    }

    @Test
    void moreMovesDuringAListThanAreKeptSendTheWholeListToZooKeeper() throws Exception {
        loadedWith(E1, 5);
        listing.beforeIndexWalk = () -> {
            listing.beforeIndexWalk = null;
            for (int i = 0; i <= CacheListing.MOVES_KEPT; i++) {
                listing.reappearing("/t/Moved" + i + "/m");
                listing.reappeared("/t/Moved" + i + "/m");
            }
        };
        assertEquals(Optional.empty(), listing.listing(Duration.ofMillis(10)));
        assertEquals(List.of(E1), paths(listing.listing(Duration.ofMillis(10)).orElseThrow().nodes()), "the next list");
    }

    @Test
    void aDeleteIsShownOnceTheNodeLeftTheCacheAndItsIndex() throws Exception {
        loadedWith(E1, 5);
        listing.deleted(E1);
        assertEquals(Optional.empty(), listing.childrenNow(NAME));
        cache.remove(E1);
        assertEquals(Optional.empty(), listing.childrenNow(NAME), "the index still lists it");
        listing.indexed(false, E1);
        assertEquals(List.of(), paths(listing.childrenNow(NAME)));
    }

    private static List<String> paths(Optional<List<ChildData>> nodes) {
        return paths(nodes.orElseThrow());
    }

    private static List<String> paths(List<ChildData> nodes) {
        return nodes.stream().map(ChildData::getPath).sorted().toList();
    }

    /** A cache whose nodes the test sets; nothing listens to it. */
    private static final class HandCache implements CuratorCache {
        private final Map<String, ChildData> nodes = new ConcurrentHashMap<>();

        void put(String path, byte[] data, long mzxid) {
            Stat stat = new Stat();
            stat.setCzxid(mzxid);
            stat.setMzxid(mzxid);
            nodes.put(path, new ChildData(path, stat, data));
        }

        void remove(String path) {
            nodes.remove(path);
        }

        @Override
        public void start() {
        }

        @Override
        public void close() {
        }

        @Override
        public Listenable<CuratorCacheListener> listenable() {
            throw new UnsupportedOperationException("nothing listens to a cache set by hand");
        }

        @Override
        public Optional<ChildData> get(String path) {
            return Optional.ofNullable(nodes.get(path));
        }

        @Override
        public int size() {
            return nodes.size();
        }

        @Override
        public Stream<ChildData> stream() {
            return nodes.values().stream();
        }
    }
}
