package io.switchboard.registry.zookeeper;

import java.time.Duration;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicReferenceArray;
import java.util.function.Consumer;
import java.util.function.Predicate;
import org.apache.curator.framework.recipes.cache.ChildData;
import org.apache.curator.framework.recipes.cache.CuratorCache;

/**
 * Whether the store's {@link CuratorCache} may answer a {@code list}, and its nodes when it may: a
 * list of 10,000 entries is then a walk over memory, not 10,000 node reads on the ZooKeeper server.
 * It may once the cache has loaded the whole tree, and shows every write this store made (which the
 * cache hears of a moment after the write returns): a bind followed by a list sees its entry, as it
 * does when the list reads the nodes. A write is shown when the cache holds its node at the write's
 * version or a later one (by the node's {@code mzxid}), not when it holds the same bytes: a node
 * moved to another session in one transaction carries the bytes it had, and the cache goes on
 * showing the old node, then none, then the new one. Until then {@link #listing} says no, after
 * waiting a little, and the caller reads the nodes itself: never a partial list. The cache also
 * says no for a name while one of its nodes is between such a delete and create ({@link
 * #reappearing}), whoever moved it, or began such a move while it was read: a list then leaves
 * that name out ({@link Listing#unsettled}) for the caller to read from ZooKeeper, and lists the
 * other names from the cache.
 *
 * <pre>{@code
 * listing.wrote(path, stat.getMzxid() - 1);   // after each write of this store, with its node's stat
 * Optional<CacheListing.Listing> all = listing.listing(Duration.ofSeconds(2));
 * }</pre>
 */
final class CacheListing {
    private final CuratorCache cache;

    /**
     * A write of this store, and when it returned: a delete, or a node the cache shows once it holds
     * it with an {@code mzxid} over {@code after}.
     */
    private record Write(boolean deleted, long after, long at) {
    }

    /** Writes of this store the cache may not show yet, by path. */
    private final Map<String, Write> unseen = new ConcurrentHashMap<>();
    private final Object changes = new Object();
    /** The cache's nodes by parent path, kept by its events: a lookup of one name reads its children only. */
    private final Map<String, Set<String>> children = new ConcurrentHashMap<>();
    /** Nodes the cache reported deleted that ZooKeeper still holds (moved in one transaction), until it reports them created. */
    private final Set<String> reappearing = ConcurrentHashMap.newKeySet();
    /**
     * Moves begun ({@link #reappearing} calls), counted, and the last {@link #MOVES_KEPT} of their
     * paths by count: a read that saw the count change knows which names moved meanwhile, so a node
     * that left the index while the read walked it is never simply missing from the answer.
     */
    private final AtomicLong moves = new AtomicLong();
    private final AtomicReferenceArray<String> moved = new AtomicReferenceArray<>(MOVES_KEPT);
    static final int MOVES_KEPT = 1024;
    private boolean initialized;
    /** Runs just before a read walks the index (tests hold a read there); null in use. */
    volatile Runnable beforeIndexWalk;

    /**
     * The cache's nodes for a list: every node but those under the {@code unsettled} parents, where
     * a node was between a delete and a create while the cache was read; the caller reads those
     * parents' children from ZooKeeper.
     */
    record Listing(List<ChildData> nodes, Set<String> unsettled) {
    }

    CacheListing(CuratorCache cache) {
        this.cache = cache;
    }

    /** The cache has loaded the tree (its listener's {@code initialized}). */
    void initialized() {
        synchronized (changes) {
            initialized = true;
            changes.notifyAll();
        }
    }

    /**
     * The cache changed (any event of its listener): whoever waits for this store's writes looks
     * again (nobody is woken while none is awaited: a bulk of binds is thousands of events).
     */
    void changed() {
        if (unseen.isEmpty()) {
            return;
        }
        synchronized (changes) {
            changes.notifyAll();
        }
    }

    /**
     * This store wrote the node at {@code path}: the cache shows the write once it holds the node
     * with an {@code mzxid} over {@code after} (the written version's, less one, or the replaced
     * version's). Told after the write returned: a cache that showed it even sooner is seen to
     * show it at the next look.
     */
    void wrote(String path, long after) {
        unseen.put(path, new Write(false, after, System.nanoTime()));
    }

    /** This store deleted the node at {@code path}; as {@link #wrote}. */
    void deleted(String path) {
        unseen.put(path, new Write(true, 0, System.nanoTime()));
    }

    /**
     * The cache reported {@code path} deleted, and ZooKeeper holds it again: until the cache
     * reports it created ({@link #reappeared}), its name's instances are not answered from the cache.
     */
    void reappearing(String path) {
        synchronized (moved) {   // the cache's listener and the store's second look both begin moves
            long n = moves.get();
            moved.set((int) (n % MOVES_KEPT), path);
            reappearing.add(path);
            moves.set(n + 1);   // after the path: a reader that sees the count sees the path
        }
    }

    /** Whether {@code path} is {@link #reappearing}: the cache reported it deleted and has not reported it created. */
    boolean moving(String path) {
        return reappearing.contains(path);
    }

    /** The cache reported {@code path} created, or it is gone from ZooKeeper too; true if it was {@link #reappearing}. */
    boolean reappeared(String path) {
        return reappearing.remove(path);
    }

    /**
     * Every node of the cache, once it is loaded and shows this store's writes; empty when that
     * did not happen within {@code wait} (the caller then reads the nodes). A write the cache still
     * does not show after the wait is forgotten: the read that follows shows it. The nodes under a
     * parent where a node was between a delete and a create are left out and that parent named
     * unsettled, as {@link #children} would not answer for it: the cache reported the node deleted
     * and ZooKeeper holds it ({@link #reappearing}), or the index lists a node the cache no longer
     * holds. Empty when more moves began during the read than it can tell apart ({@link #MOVES_KEPT}).
     */
    Optional<Listing> listing(Duration wait) throws InterruptedException {
        if (!ready(wait)) {
            return Optional.empty();
        }
        long movesBefore = moves.get();
        List<ChildData> all = cache.stream().toList();
        Set<String> listed = new HashSet<>();
        for (ChildData node : all) {
            listed.add(node.getPath());
        }
        Set<String> unsettled = new HashSet<>();
        for (String p : reappearing) {
            unsettled.add(parentOf(p));
        }
        walkingIndex();
        for (Map.Entry<String, Set<String>> siblings : children.entrySet()) {
            for (String p : siblings.getValue()) {
                if (!listed.contains(p)) {
                    unsettled.add(siblings.getKey());   // deleted; the listener has not heard yet
                    break;
                }
            }
        }
        if (!movedSince(movesBefore, unsettled::add)) {
            return Optional.empty();
        }
        if (unsettled.isEmpty()) {
            return Optional.of(new Listing(all, Set.of()));
        }
        List<ChildData> settled = new ArrayList<>(all.size());
        for (ChildData node : all) {
            if (!unsettled.contains(parentOf(node.getPath()))) {
                settled.add(node);
            }
        }
        return Optional.of(new Listing(settled, Set.copyOf(unsettled)));
    }

    /**
     * Gives {@code parents} the parent of every move begun since {@code before}; false when more
     * began than {@link #moved} keeps, or the ones read were overwritten meanwhile.
     */
    private boolean movedSince(long before, Consumer<String> parents) {
        long after = moves.get();
        if (after == before) {
            return true;
        }
        if (after - before > MOVES_KEPT) {
            return false;
        }
        for (long n = before; n < after; n++) {
            parents.accept(parentOf(moved.get((int) (n % MOVES_KEPT))));
        }
        // the move counted next may have written its path already: it takes the slot of before's
        return moves.get() - before < MOVES_KEPT;
    }

    /** Whether a move under {@code parent} began since {@code before}; true too when the moves since are not all known. */
    private boolean movedUnder(String parent, long before) {
        boolean[] under = {false};
        return !movedSince(before, p -> under[0] |= p.equals(parent)) || under[0];
    }

    private void walkingIndex() {
        Runnable hook = beforeIndexWalk;
        if (hook != null) {
            hook.run();
        }
    }

    private static String parentOf(String path) {
        int slash = path.lastIndexOf('/');
        return slash <= 0 ? "" : path.substring(0, slash);
    }

    /**
     * The children of {@code parent} in the cache, as {@link #listing} would list them (once it is
     * loaded, at once if not; and shows this store's writes, waiting up to {@code wait}), found by the index the cache's events keep rather
     * than by a walk over every node.
     */
    Optional<List<ChildData>> children(String parent, Duration wait) throws InterruptedException {
        synchronized (changes) {
            if (!initialized) {
                return Optional.empty();   // still loading: reading the nodes is sooner than waiting
            }
        }
        if (!ready(wait)) {
            return Optional.empty();
        }
        return indexedChildren(parent);
    }

    /**
     * {@link #children} without waiting: empty unless the cache is loaded and shows this store's
     * writes now. A write not shown yet is kept, for the next read that may wait.
     */
    Optional<List<ChildData>> childrenNow(String parent) {
        synchronized (changes) {
            if (!initialized || !caughtUp()) {
                return Optional.empty();
            }
        }
        return indexedChildren(parent);
    }

    /**
     * The cache's nodes under {@code parent} by the index; empty while one of them is between a
     * delete and a create: the index lists it and the cache has deleted it (the listener that
     * follows the cache has not heard of the delete yet), it is {@link #reappearing}, or its move
     * began during this read.
     */
    private Optional<List<ChildData>> indexedChildren(String parent) {
        long movesBefore = moves.get();
        if (!reappearing.isEmpty()) {
            String prefix = parent + "/";
            for (String p : reappearing) {
                if (p.startsWith(prefix)) {
                    return Optional.empty();
                }
            }
        }
        walkingIndex();
        Set<String> paths = children.get(parent);
        List<ChildData> out = new ArrayList<>();
        if (paths != null) {
            for (String p : paths) {
                Optional<ChildData> node = cache.get(p);
                if (node.isEmpty()) {
                    return Optional.empty();
                }
                out.add(node.get());
            }
        }
        // a move of one of these nodes begun after the look above may have taken it out of the
        // index before the walk reached it
        if (moves.get() != movesBefore && movedUnder(parent, movesBefore)) {
            return Optional.empty();
        }
        return Optional.of(out);
    }

    /** The cache created or deleted {@code path}: the index of children follows. */
    void indexed(boolean created, String path) {
        int slash = path.lastIndexOf('/');
        if (slash <= 0) {
            return;
        }
        String parent = path.substring(0, slash);
        if (created) {
            children.computeIfAbsent(parent, k -> ConcurrentHashMap.newKeySet()).add(path);
        } else {
            children.computeIfPresent(parent, (k, set) -> {
                set.remove(path);
                return set.isEmpty() ? null : set;
            });
        }
    }

    private boolean ready(Duration wait) throws InterruptedException {
        long asked = System.nanoTime();
        long deadline = asked + wait.toNanos();
        synchronized (changes) {
            while (!initialized || !caughtUp()) {
                long left = deadline - System.nanoTime();
                if (left <= 0) {
                    unseen.values().removeIf(w -> w.at() - asked <= 0);
                    return false;
                }
                changes.wait(Math.max(1, left / 1_000_000));
            }
        }
        return true;
    }

    /**
     * How many of the cache's nodes {@code counted} accepts, without waiting for this store's
     * writes to show (a count for the metrics, not a list); empty before the cache has loaded.
     */
    Optional<Long> count(Predicate<ChildData> counted) {
        synchronized (changes) {
            if (!initialized) {
                return Optional.empty();
            }
        }
        return Optional.of(cache.stream().filter(counted).count());
    }

    /** Drops the writes the cache shows now; true when none is left. */
    private boolean caughtUp() {
        unseen.entrySet().removeIf(w -> shows(w.getKey(), w.getValue()));
        return unseen.isEmpty();
    }

    /**
     * The cache, and the index its listener keeps (told just after the cache changed), show the
     * write: the node gone, or there at the written version or a later one.
     */
    private boolean shows(String path, Write write) {
        Optional<ChildData> now = cache.get(path);
        boolean indexed = isIndexed(path);
        if (write.deleted()) {
            return now.isEmpty() && !indexed;
        }
        return now.isPresent() && indexed && now.get().getStat() != null
                && now.get().getStat().getMzxid() > write.after();
    }

    private boolean isIndexed(String path) {
        int slash = path.lastIndexOf('/');
        Set<String> siblings = slash <= 0 ? null : children.get(path.substring(0, slash));
        return siblings != null && siblings.contains(path);
    }
}
