package io.switchboard.registry.zookeeper;

import io.switchboard.protocol.DaemonThreads;
import io.switchboard.registry.ComponentEntry;
import io.switchboard.registry.store.RegistryStore;
import io.switchboard.registry.store.StoreFormat;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.Set;
import java.util.TreeMap;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.BiConsumer;
import java.util.function.Consumer;
import java.util.regex.Pattern;
import org.apache.curator.framework.CuratorFramework;
import org.apache.curator.framework.CuratorFrameworkFactory;
import org.apache.curator.framework.api.BackgroundCallback;
import org.apache.curator.framework.api.CuratorEvent;
import org.apache.curator.framework.recipes.cache.ChildData;
import org.apache.curator.framework.recipes.cache.CuratorCache;
import org.apache.curator.framework.recipes.cache.CuratorCacheListener;
import org.apache.curator.framework.state.ConnectionState;
import org.apache.curator.retry.ExponentialBackoffRetry;
import org.apache.zookeeper.CreateMode;
import org.apache.zookeeper.KeeperException;
import org.apache.zookeeper.data.Stat;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Entries in ZooKeeper, through Apache Curator, so that several registry servers share one view.
 * Key {@code zookeeper}. One znode per instance, {@code ROOT/NAME/INSTANCE}, whose data is the
 * entry as JSON (one entry of {@code StoreFormat}); a leased entry is an ephemeral node of this
 * store's session, an entry without a lease a persistent one.
 *
 * <pre>{@code
 * RegistryStore store = ZooKeeperRegistryStore.builder("zk1:2181,zk2:2181,zk3:2181").root("/switchboard").start();
 * try (RegistryServer registry = RegistryServer.builder().store(store).start()) { ... }
 * }</pre>
 *
 * <p>Ephemeral nodes die with the ZooKeeper session that made them: when this registry process
 * dies, its leased entries go when its session expires. When the session expires but the process
 * lives (a long pause, a partition), Curator opens a new session and this store creates its
 * ephemeral nodes again. It checks each one first: a node still owned by one of its old sessions
 * (the server has not yet noticed that session's end) is deleted and created again under the new
 * session; a node owned by any other session belongs to another registry server now and is left
 * alone. (Apache Dubbo lost providers for good until it learned both halves of this.) A node
 * whose restore fails (the connection lost again in the middle of it) is tried again at the
 * next reconnection and after a back-off of 0.2 s doubling to 5 s, until it is written, unbound
 * or taken over, not left to its component's next renewal.
 *
 * <p>Connection loss: each operation is retried by Curator's policy (exponential back-off) and
 * then fails with {@link StoreException} naming the ensemble; nothing is changed in that case.
 */
public final class ZooKeeperRegistryStore implements RegistryStore {
    private static final Logger LOG = LoggerFactory.getLogger(ZooKeeperRegistryStore.class);
    /** ZooKeeper refuses znode data over about 1 MiB (jute.maxbuffer); stay below it. */
    static final int MAX_DATA_BYTES = 1_000_000;
    private static final Pattern ROOT = Pattern.compile("(/[A-Za-z0-9_.:-]+)+");

    private final CuratorFramework client;
    private final String ensemble;
    private final String root;
    private final int retries;
    /** The ephemeral nodes this store made, by path: what it owes ZooKeeper after a new session. */
    private final Map<String, ComponentEntry> ephemerals = new LinkedHashMap<>();
    private final Set<Long> formerSessions = new HashSet<>();
    private long session;
    /**
     * Paths of {@link #ephemerals} not yet written under the current session: a restore that failed
     * (the connection lost again in the middle of it, a refused write) is tried again after a back-off
     * and at every reconnection, rather than left until the component's next renewal.
     */
    private final Set<String> unrestored = new LinkedHashSet<>();
    private long restoreRetryMillis = FIRST_RESTORE_RETRY_MILLIS;
    private boolean restoreRetryScheduled;
    private static final long FIRST_RESTORE_RETRY_MILLIS = 200;
    private static final long LAST_RESTORE_RETRY_MILLIS = 5_000;
    /** Called before each leased entry is restored, with its path (a test makes it fail). */
    volatile Consumer<String> beforeRestore = path -> { };
    /** Set by {@link #reportChanges}: a copy of the tree under the root that ZooKeeper keeps current. */
    private CuratorCache cache;
    /** Lists from {@link #cache} once it is loaded; null without a cache. Set under this lock, read without it. */
    private volatile CacheListing listing;
    /** How long a list waits for the cache to load or show this store's writes before it reads the nodes. */
    private static final Duration CACHE_WAIT = Duration.ofSeconds(2);
    /** How long after a delete the cache may take to report the node's re-creation. */
    private static final long RECHECK_MILLIS = 2_000;
    /** The longest a read started in the background is waited for (Curator retries within it). */
    private static final Duration BACKGROUND_WAIT = Duration.ofSeconds(30);
    /** Called first for every create, change and delete the cache reports, on the thread that reports them (a test holds it there). */
    volatile BiConsumer<CuratorCacheListener.Type, String> onCacheEvent = (type, path) -> { };
    /** Second looks finished (see {@link #reportGone}), so a test can wait for one instead of for its delay. */
    private final AtomicInteger secondLooks = new AtomicInteger();
    private final AtomicInteger listsFromCache = new AtomicInteger();
    private final AtomicInteger lookupsFromCache = new AtomicInteger();
    private final AtomicInteger namesReadForLists = new AtomicInteger();
    private final ScheduledExecutorService recheck = Executors.newSingleThreadScheduledExecutor(DaemonThreads.named("zookeeper-store-recheck"));
    private final ExecutorService restorer = Executors.newSingleThreadExecutor(DaemonThreads.named("zookeeper-store-restorer"));

    private ZooKeeperRegistryStore(Builder b) {
        this.ensemble = b.ensemble;
        this.root = b.root;
        this.retries = b.retries;
        this.client = CuratorFrameworkFactory.builder().connectString(b.ensemble)
                .sessionTimeoutMs((int) b.sessionTimeout.toMillis())
                .connectionTimeoutMs((int) b.connectionTimeout.toMillis())
                .retryPolicy(new ExponentialBackoffRetry(200, b.retries, 2_000))
                .build();
        client.getConnectionStateListenable().addListener((c, state) -> {
            if (state == ConnectionState.LOST || state == ConnectionState.SUSPENDED) {
                LOG.warn("ZooKeeper at {}: connection {}", ensemble, state.name().toLowerCase());
            } else if (state.isConnected()) {
                if (state == ConnectionState.RECONNECTED) {
                    // the end of an outage the warning above began: an operator (and a test) sees it is over
                    LOG.info("ZooKeeper at {}: connection back", ensemble);
                }
                restorer.execute(this::restoreAfterNewSession);
            }
        });
        client.start();
        boolean started = false;
        try {
            if (!client.blockUntilConnected((int) b.connectionTimeout.toMillis(), TimeUnit.MILLISECONDS)) {
                client.close();
                throw new StoreException("cannot reach ZooKeeper at " + ensemble + " within "
                        + b.connectionTimeout.toMillis() + " ms");
            }
            synchronized (this) {
                if (session == 0) {
                    session = currentSession();
                }
            }
            started = true;
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            client.close();
            throw new StoreException("interrupted while connecting to ZooKeeper at " + ensemble, e);
        } catch (StoreException e) {
            throw e;
        } catch (Exception e) {
            client.close();
            throw new StoreException("cannot reach ZooKeeper at " + ensemble + ": " + e, e);
        } finally {
            if (!started) {
                restorer.shutdownNow();
                recheck.shutdownNow();
            }
        }
        LOG.info("registry store: ZooKeeper at {}, root {}", ensemble, root);
    }

    /** A store on {@code ensemble}, a ZooKeeper connect string ({@code host:port[,host:port...]}). */
    public static Builder builder(String ensemble) {
        return new Builder(ensemble);
    }

    public String root() {
        return root;
    }

    @Override
    public boolean shared() {
        return true;
    }

    @Override
    public synchronized void bind(ComponentEntry entry) throws AlreadyBoundException {
        String path = path(entry.name(), entry.instanceId());
        byte[] data = encode(entry);
        try {
            Stat created = new Stat();
            client.create().storingStatIn(created).creatingParentContainersIfNeeded().withMode(mode(entry))
                    .forPath(path, data);
            wrote(path, created.getMzxid() - 1);
        } catch (KeeperException.NodeExistsException e) {
            throw new AlreadyBoundException(entry.name() + " instance " + entry.instanceId() + " is already bound");
        } catch (Exception e) {
            throw failure("bind " + path, e);
        }
        remember(path, entry);
    }

    @Override
    public synchronized void rebind(ComponentEntry entry) {
        String path = path(entry.name(), entry.instanceId());
        try {
            put(path, entry);
        } catch (Exception e) {
            throw failure("rebind " + path, e);
        }
        remember(path, entry);
    }

    @Override
    public synchronized int unbind(String name, String instanceId) {
        try {
            List<String> instances = instanceId == null ? children(namePath(name)) : List.of(instanceId);
            int removed = 0;
            for (String id : instances) {
                String path = path(name, id);
                forget(path);
                try {
                    client.delete().forPath(path);
                    deleted(path);
                    removed++;
                } catch (KeeperException.NoNodeException gone) {
                    // already gone: not counted
                }
            }
            return removed;
        } catch (Exception e) {
            throw failure("unbind " + namePath(name), e);
        }
    }

    /** True for a node of this store's session, or a persistent one (no session holds it). */
    @Override
    public synchronized boolean heldHere(String name, String instanceId) {
        String path = path(name, instanceId);
        try {
            Stat stat = client.checkExists().forPath(path);
            return stat != null && (stat.getEphemeralOwner() == session || stat.getEphemeralOwner() == 0);
        } catch (Exception e) {
            throw failure("read " + path, e);
        }
    }

    /**
     * Deletes the node only while it is still an ephemeral node of this server's session: one that
     * another registry server re-created under its own session (a component renewing through it
     * after this one was unreachable) is theirs now, and is only forgotten here.
     */
    @Override
    public synchronized boolean expire(String name, String instanceId) {
        String path = path(name, instanceId);
        try {
            Stat stat = client.checkExists().forPath(path);
            if (stat == null || stat.getEphemeralOwner() != session) {
                forget(path);
                return false;
            }
            client.delete().withVersion(stat.getVersion()).forPath(path);
            deleted(path);
            forget(path);
            return true;
        } catch (KeeperException.NoNodeException | KeeperException.BadVersionException changed) {
            // deleted or re-written by another server between our read and our delete: theirs now
            forget(path);
            return false;
        } catch (Exception e) {
            throw failure("expire " + path, e);
        }
    }

    @Override
    public List<ComponentEntry> lookup(String name) {
        List<ComponentEntry> cached = lookupInCache(name);
        if (cached != null) {
            return cached;
        }
        try {
            return entries(name, children(namePath(name)).stream().map(id -> background(
                    f -> client.getData().inBackground(f).forPath(path(name, id)))).toList());
        } catch (Exception e) {
            throw failure("lookup " + namePath(name), e);
        }
    }

    /**
     * The instances of {@code name} from the cache, as {@link #list} takes them (once it is loaded
     * and shows this store's writes), each node decoded once per version; null when the cache may
     * not answer (the caller reads the nodes). A lookup then costs no round trip to ZooKeeper.
     */
    private List<ComponentEntry> lookupInCache(String name) {
        CacheListing from;
        synchronized (this) {
            from = listing;
        }
        if (from == null || !client.getZookeeperClient().isConnected()) {
            return null;
        }
        Optional<List<ChildData>> nodes;
        try {
            nodes = from.children(namePath(name), CACHE_WAIT);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new StoreException("lookup " + namePath(name) + " was interrupted", e);
        }
        if (nodes.isEmpty()) {
            return null;
        }
        lookupsFromCache.incrementAndGet();
        return oldestFirst(nodes.get());
    }

    /**
     * From the cache when it is loaded and shows this store's writes now; null when it would have
     * to wait for them (or has not loaded, or ZooKeeper is away): {@link #lookup} then waits or
     * reads the nodes. A node that changed is decoded here, once per version.
     */
    @Override
    public List<ComponentEntry> lookupNow(String name) {
        CacheListing from = listing;
        if (from == null || !client.getZookeeperClient().isConnected()) {
            return null;
        }
        Optional<List<ChildData>> nodes = from.childrenNow(namePath(name));
        if (nodes.isEmpty()) {
            return null;
        }
        lookupsFromCache.incrementAndGet();
        return oldestFirst(nodes.get());
    }

    private List<ComponentEntry> oldestFirst(List<ChildData> nodes) {
        List<Read> found = new ArrayList<>();
        for (ChildData node : nodes) {
            found.add(decodedOnce(node.getPath(), node.getData(), node.getStat()));
        }
        found.sort(Comparator.comparingLong(Read::czxid));
        return found.stream().map(Read::entry).toList();
    }

    /** The node's entry, decoded again only when the node changed since it was last decoded. */
    private Read decodedOnce(String path, byte[] data, Stat stat) {
        Decoded d = decoded.get(path);
        if (d == null || d.czxid() != stat.getCzxid() || d.mzxid() != stat.getMzxid()) {
            d = new Decoded(stat.getCzxid(), stat.getMzxid(), decode(path, data, stat));
            decoded.put(path, d);
        }
        return d.read();
    }

    /**
     * Every entry, asked for all at once (every name's instances, then every instance's node): the
     * wait of a few round trips, not of one per node (10,000 entries took seconds one by one).
     */
    @Override
    public List<ComponentEntry> list() {
        CacheListing from;
        synchronized (this) {
            from = listing;
        }
        if (from != null && client.getZookeeperClient().isConnected()) {
            try {
                Optional<CacheListing.Listing> cached = from.listing(CACHE_WAIT);
                if (cached.isPresent()) {
                    listsFromCache.incrementAndGet();
                    return listOf(cached.get());
                }
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                throw new StoreException("list " + root + " was interrupted", e);
            } catch (Exception e) {
                throw failure("list " + root, e);
            }
        }
        return readList();
    }

    /** Counted in the cache without decoding a node (the metrics ask on every scrape); listed without one. */
    @Override
    public int size() {
        CacheListing from;
        synchronized (this) {
            from = listing;
        }
        if (from != null) {
            Optional<Long> n = from.count(node -> instanceSegments(node.getPath()) != null);
            if (n.isPresent()) {
                return (int) (long) n.get();
            }
        }
        return list().size();
    }

    /**
     * The entries among the cache's nodes, as {@link #readList} gives them: by name, oldest first;
     * the instances of the listing's unsettled names (one of their nodes was moving) read from
     * ZooKeeper instead, a few nodes where a list read from ZooKeeper reads every one. A node
     * decoded at the same version before is not decoded again: an entry holds its interface
     * schema, tens of kilobytes, and decoding 10,000 of them took seconds per list.
     */
    private List<ComponentEntry> listOf(CacheListing.Listing cached) throws Exception {
        TreeMap<String, List<Read>> byName = new TreeMap<>();
        Set<String> listed = new HashSet<>();
        for (ChildData node : cached.nodes()) {
            String[] segments = instanceSegments(node.getPath());
            if (segments != null) {
                listed.add(node.getPath());
                byName.computeIfAbsent(segments[0], n -> new ArrayList<>())
                        .add(decodedOnce(node.getPath(), node.getData(), node.getStat()));
            }
        }
        List<String> unsettled = new ArrayList<>();
        for (String parent : cached.unsettled()) {
            String name = nameOf(parent);
            if (name != null) {   // else the root: a name's node (it holds no entry) left the cache before its index heard
                unsettled.add(name);
            }
        }
        if (!unsettled.isEmpty()) {
            namesReadForLists.addAndGet(unsettled.size());
            for (List<CompletableFuture<CuratorEvent>> reads : nodeReads(unsettled)) {
                for (CompletableFuture<CuratorEvent> read : reads) {
                    CuratorEvent e = answer(read, root);
                    String[] segments = e == null ? null : instanceSegments(e.getPath());
                    if (segments != null) {
                        listed.add(e.getPath());
                        byName.computeIfAbsent(segments[0], n -> new ArrayList<>())
                                .add(decodedOnce(e.getPath(), e.getData(), e.getStat()));
                    }
                }
            }
        }
        decoded.keySet().retainAll(listed);
        List<ComponentEntry> all = new ArrayList<>();
        for (List<Read> reads : byName.values()) {
            reads.sort(Comparator.comparingLong(Read::czxid));
            reads.forEach(r -> all.add(r.entry()));
        }
        return all;
    }

    /** {@code NAME} for {@code ROOT/NAME}, else null. */
    private String nameOf(String path) {
        if (!path.startsWith(root + "/")) {
            return null;
        }
        String name = path.substring(root.length() + 1);
        return name.isEmpty() || name.indexOf('/') >= 0 ? null : name;
    }

    /** Every entry read from ZooKeeper now: every name's children, then every node (for tests, and without a cache). */
    List<ComponentEntry> readList() {
        List<ComponentEntry> all = new ArrayList<>();
        try {
            List<String> names = children(root).stream().sorted().toList();
            List<List<CompletableFuture<CuratorEvent>>> nodes = nodeReads(names);
            for (int i = 0; i < names.size(); i++) {
                all.addAll(entries(names.get(i), nodes.get(i)));
            }
        } catch (Exception e) {
            throw failure("list " + root, e);
        }
        return all;
    }

    /**
     * The reads of every instance node of each of {@code names}, in their order: every name's
     * children asked for at once, then every node: the wait of two round trips, not of one per node.
     */
    private List<List<CompletableFuture<CuratorEvent>>> nodeReads(List<String> names) throws Exception {
        List<CompletableFuture<CuratorEvent>> instances = new ArrayList<>();
        for (String name : names) {
            instances.add(background(f -> client.getChildren().inBackground(f).forPath(namePath(name))));
        }
        List<List<CompletableFuture<CuratorEvent>>> nodes = new ArrayList<>();
        for (int i = 0; i < names.size(); i++) {
            CuratorEvent ids = answer(instances.get(i), namePath(names.get(i)));
            List<CompletableFuture<CuratorEvent>> reads = new ArrayList<>();
            if (ids != null) {
                String name = names.get(i);
                for (String id : ids.getChildren()) {
                    reads.add(background(f -> client.getData().inBackground(f).forPath(path(name, id))));
                }
            }
            nodes.add(reads);
        }
        return nodes;
    }

    /**
     * The entries of one name from its nodes' answers, oldest first (ZooKeeper's creation order).
     * With the cache running (a lookup or list while a node moves), a node the cache decoded at the
     * same version is not decoded again: the cache's deletes keep those decodes to live nodes.
     */
    private List<ComponentEntry> entries(String name, List<CompletableFuture<CuratorEvent>> nodes) throws Exception {
        boolean cached = listing != null;
        List<Read> found = new ArrayList<>();
        for (CompletableFuture<CuratorEvent> node : nodes) {
            CuratorEvent e = answer(node, namePath(name));
            if (e != null) {
                found.add(cached ? decodedOnce(e.getPath(), e.getData(), e.getStat())
                        : decode(e.getPath(), e.getData(), e.getStat()));
            }
        }
        found.sort(Comparator.comparingLong(Read::czxid));
        return found.stream().map(Read::entry).toList();
    }

    /** Starts one background operation; the future completes with its answer. */
    private static CompletableFuture<CuratorEvent> background(Background start) {
        CompletableFuture<CuratorEvent> answer = new CompletableFuture<>();
        try {
            start.begin((c, event) -> answer.complete(event));
        } catch (Exception e) {
            answer.completeExceptionally(e);
        }
        return answer;
    }

    private interface Background {
        void begin(BackgroundCallback callback) throws Exception;
    }

    /** A background operation's answer; null when its node is gone meanwhile, an exception for any other failure. */
    private static CuratorEvent answer(CompletableFuture<CuratorEvent> pending, String path) throws Exception {
        CuratorEvent e;
        try {
            e = pending.get(BACKGROUND_WAIT.toMillis(), TimeUnit.MILLISECONDS);
        } catch (java.util.concurrent.ExecutionException x) {
            throw x.getCause() instanceof Exception cause ? cause : x;
        }
        KeeperException.Code code = KeeperException.Code.get(e.getResultCode());
        if (code == KeeperException.Code.NONODE) {
            return null;
        }
        if (code != KeeperException.Code.OK) {
            throw KeeperException.create(code, e.getPath() != null ? e.getPath() : path);
        }
        return e;
    }

    @Override
    public Optional<ComponentEntry> find(String name, String instanceId) {
        try {
            return read(path(name, instanceId)).map(Read::entry);
        } catch (Exception e) {
            throw failure("read " + path(name, instanceId), e);
        }
    }

    /**
     * Reports every create, change and delete of an instance node under the root, whoever made it,
     * through a Curator {@link CuratorCache}: so that watchers of this registry server also hear of
     * binds made through other servers, and of entries that left with another server's session.
     */
    @Override
    public synchronized boolean reportChanges(ChangeSink sink) {
        if (cache != null) {
            throw new IllegalStateException("this store already reports its changes");
        }
        cache = CuratorCache.build(client, root);
        CacheListing lists = new CacheListing(cache);
        // in this order, so that a lookup from the cache never misses a node that is moving: a
        // created node is indexed before it stops being reappearing, and a deleted one that
        // ZooKeeper holds again is reappearing before it leaves the index
        cache.listenable().addListener(CuratorCacheListener.builder()
                .forAll((type, before, node) -> onCacheEvent.accept(type, (node != null ? node : before).getPath()))
                .forCreates(node -> lists.indexed(true, node.getPath()))
                .forCreates(node -> reportBound(sink, node))
                .forChanges((before, node) -> reportBound(sink, node))
                .forDeletes(node -> reportGone(sink, node.getPath()))
                .forDeletes(node -> {
                    lists.indexed(false, node.getPath());
                    decoded.remove(node.getPath());
                })
                .forAll((type, before, node) -> lists.changed())
                .forInitialized(lists::initialized)
                .build());
        listing = lists;
        cache.start();
        return true;
    }

    /**
     * A deleted node is reported gone only if it is still absent: a registry server that takes an
     * instance over deletes and creates its node in one transaction ({@link #put}), which the cache
     * reports as a delete and then a create; passed on, every watcher saw the instance go and come
     * back. Runs on the thread that reports the cache's events (so in their order). A node found
     * again is checked once more a moment later, in case the cache never reports it as created
     * (deleted again before it read it): then it is reported gone.
     */
    private void reportGone(ChangeSink sink, String path) {
        String[] segments = instanceSegments(path);
        if (segments == null) {
            return;
        }
        if (!inZooKeeper(path)) {
            tell(() -> sink.gone(segments[0], segments[1]), path);
            return;
        }
        listing.reappearing(path);
        lookAgainLater(sink, path);
    }

    /** Whether ZooKeeper holds {@code path} now; false when it cannot tell, so that what the cache saw is reported. */
    private boolean inZooKeeper(String path) {
        try {
            return client.checkExists().forPath(path) != null;
        } catch (Exception e) {
            return false;
        }
    }

    private void lookAgainLater(ChangeSink sink, String path) {
        recheck.schedule(() -> client.runSafe(() -> {
            try {
                lookAgain(sink, path);
            } finally {
                secondLooks.incrementAndGet();
            }
        }), RECHECK_MILLIS, TimeUnit.MILLISECONDS);
    }

    /**
     * The second look at a node whose move the cache has not reported over. The move stays marked
     * until it is: while the cache holds the node, its create is on its way to the listener (which
     * ends the move, {@link #reportBound}); while ZooKeeper holds it and the cache does not yet, it
     * is looked at again later. Only a node gone from both ends the move here, reported gone.
     * Ending the move before asking, a lookup in between found neither the mark nor the node in the
     * index, and missed the instance.
     */
    void lookAgain(ChangeSink sink, String path) {
        String[] segments = instanceSegments(path);
        if (segments == null || !listing.moving(path) || cache.get(path).isPresent()) {
            return;
        }
        if (inZooKeeper(path)) {
            lookAgainLater(sink, path);
        } else if (listing.reappeared(path)) {
            tell(() -> sink.gone(segments[0], segments[1]), path);
        }
    }

    /** How many lists the cache answered (for tests). */
    int listsFromCache() {
        return listsFromCache.get();
    }

    /** How many names lists from the cache read from ZooKeeper, one of their nodes moving (for tests). */
    int namesReadForLists() {
        return namesReadForLists.get();
    }

    /** How many lookups the cache answered; for tests. */
    int lookupsFromCache() {
        return lookupsFromCache.get();
    }

    /** How many second looks at a node that came back have finished (for tests). */
    int secondLooksDone() {
        return secondLooks.get();
    }

    private void reportBound(ChangeSink sink, ChildData node) {
        if (instanceSegments(node.getPath()) == null) {
            return;
        }
        listing.reappeared(node.getPath());
        byte[] data = node.getData();
        if (data == null || data.length > MAX_DATA_BYTES) {
            return;
        }
        ComponentEntry entry;
        try {
            entry = StoreFormat.decodeEntry(data);
        } catch (IllegalArgumentException e) {
            LOG.warn("ZooKeeper at {}: {} is not a registry entry; not reported to watchers: {}", ensemble,
                    node.getPath(), e.getMessage());
            return;
        }
        tell(() -> sink.bound(entry), node.getPath());
    }

    /**
     * Tells the watchers' sink of a change. A sink that fails is logged and the cache's listener
     * goes on: the steps after it (the index of each name's instances, waking a read that waits
     * for this store's write) must run whatever the watchers do.
     */
    private void tell(Runnable report, String path) {
        try {
            report.run();
        } catch (RuntimeException e) {
            LOG.warn("ZooKeeper at {}: watchers were not told of the change at {}: {}", ensemble, path, e.toString());
        }
    }

    /** {@code [name, instanceId]} for {@code ROOT/NAME/INSTANCE}, else null. */
    private String[] instanceSegments(String path) {
        if (!path.startsWith(root + "/")) {
            return null;
        }
        String[] segments = path.substring(root.length() + 1).split("/");
        return segments.length == 2 ? segments : null;
    }

    /** Closes the session: this store's ephemeral entries leave ZooKeeper now. */
    @Override
    public void close() {
        synchronized (this) {
            if (cache != null) {
                cache.close();
            }
        }
        restorer.shutdownNow();
        recheck.shutdownNow();
        client.close();
    }

    /** The id of the current ZooKeeper session (for tests). */
    public synchronized long sessionId() {
        return session;
    }

    /** The Curator client (for tests that expire its session). */
    public CuratorFramework curator() {
        return client;
    }

    /** Creates or replaces the node at {@code path} under this session. */
    private void put(String path, ComponentEntry entry) throws Exception {
        byte[] data = encode(entry);
        for (int attempt = 0; attempt < 10; attempt++) {
            Stat stat = client.checkExists().forPath(path);
            try {
                if (stat == null) {
                    Stat created = new Stat();
                    client.create().storingStatIn(created).creatingParentContainersIfNeeded().withMode(mode(entry))
                            .forPath(path, data);
                    wrote(path, created.getMzxid() - 1);
                } else if (stat.getEphemeralOwner() == (entry.leased() ? session : 0)) {
                    // already a node of the right kind and owner: change it in place, so that
                    // watchers see one change rather than the instance going and coming back
                    Stat changed = client.setData().withVersion(stat.getVersion()).forPath(path, data);
                    wrote(path, changed.getMzxid() - 1);
                } else {
                    // delete and create in one transaction: an ephemeral node moves to this session,
                    // and no reader of ZooKeeper ever sees the instance missing. The new node is
                    // written after the old one's last change, often with the same bytes
                    client.transaction().forOperations(
                            client.transactionOp().delete().withVersion(stat.getVersion()).forPath(path),
                            client.transactionOp().create().withMode(mode(entry)).forPath(path, data));
                    wrote(path, stat.getMzxid());
                }
                return;
            } catch (KeeperException.NodeExistsException | KeeperException.NoNodeException
                     | KeeperException.BadVersionException raced) {
                // another writer got there between our read and our write: look again
            }
        }
        throw new StoreException("ZooKeeper at " + ensemble + ": " + path + " kept changing under concurrent writers");
    }

    /**
     * This store wrote the node at {@code path}, at a version with an {@code mzxid} over {@code
     * after}: a read from the cache waits until it shows that version or a later one.
     */
    private void wrote(String path, long after) {
        CacheListing lists = listing;
        if (lists != null) {
            lists.wrote(path, after);
        }
    }

    /** This store deleted the node at {@code path}: a read from the cache waits until it shows it gone. */
    private void deleted(String path) {
        CacheListing lists = listing;
        if (lists != null) {
            lists.deleted(path);
        }
    }

    private void remember(String path, ComponentEntry entry) {
        unrestored.remove(path);   // just written under the current session, or made persistent
        if (entry.leased()) {
            ephemerals.put(path, entry);
        } else {
            ephemerals.remove(path);
        }
    }

    /** The node at {@code path} is no longer this store's to keep: unbound, expired or another server's. */
    private void forget(String path) {
        ephemerals.remove(path);
        unrestored.remove(path);
    }

    /**
     * Runs after every (re)connection and for each retry: on a new session it restores every leased
     * entry; on the same session, those whose restore failed.
     */
    private synchronized void restoreAfterNewSession() {
        long now;
        try {
            now = currentSession();
        } catch (Exception e) {
            return;   // not connected after all; the next CONNECTED/RECONNECTED event runs this again
        }
        if (now == 0) {
            return;
        }
        if (now != session) {
            if (session == 0) {   // the first connection, before the constructor noted it: nothing to restore
                session = now;
                return;
            }
            formerSessions.add(session);
            session = now;
            LOG.info("ZooKeeper at {}: new session {}; restoring {} leased entries", ensemble, Long.toHexString(now),
                    ephemerals.size());
            unrestored.clear();
            unrestored.addAll(ephemerals.keySet());
            restoreRetryMillis = FIRST_RESTORE_RETRY_MILLIS;
        }
        restoreUnrestored();
    }

    private void restoreUnrestored() {
        if (unrestored.isEmpty()) {
            return;
        }
        int failed = 0;
        String firstFailure = null;
        for (String path : new ArrayList<>(unrestored)) {
            ComponentEntry entry = ephemerals.get(path);
            if (entry == null) {   // unbound, expired or taken over since
                unrestored.remove(path);
                continue;
            }
            try {
                beforeRestore.accept(path);
                restore(path, entry);
                unrestored.remove(path);
            } catch (Exception ex) {
                if (failed++ == 0) {
                    firstFailure = path + ": " + ex;
                }
            }
        }
        if (failed == 0) {
            return;
        }
        long delay = restoreRetryMillis;
        LOG.warn("ZooKeeper at {}: could not restore {} leased entries on session {} (first {}); trying again in {} ms",
                ensemble, failed, Long.toHexString(session), firstFailure, delay);
        if (!restoreRetryScheduled) {
            restoreRetryMillis = Math.min(delay * 2, LAST_RESTORE_RETRY_MILLIS);
            try {
                recheck.schedule(() -> restorer.execute(this::retryRestore), delay, TimeUnit.MILLISECONDS);
                restoreRetryScheduled = true;
            } catch (RejectedExecutionException closed) {
                // the store is closing: its ephemeral entries go with its session anyway
            }
        }
    }

    private synchronized void retryRestore() {
        restoreRetryScheduled = false;
        if (client.getZookeeperClient().isConnected()) {   // else the reconnection's event runs the restore
            restoreAfterNewSession();
        }
    }

    /** Leased entries whose restore under the current session has failed and is still to be tried again; for tests. */
    synchronized int unrestored() {
        return unrestored.size();
    }

    private void restore(String path, ComponentEntry entry) throws Exception {
        byte[] data = encode(entry);
        for (int attempt = 0; attempt < 10; attempt++) {
            Stat stat = client.checkExists().forPath(path);
            if (stat == null) {
                try {
                    Stat created = new Stat();
                    client.create().storingStatIn(created).creatingParentContainersIfNeeded()
                            .withMode(CreateMode.EPHEMERAL).forPath(path, data);
                    wrote(path, created.getMzxid() - 1);
                    return;
                } catch (KeeperException.NodeExistsException raced) {
                    continue;
                }
            }
            long owner = stat.getEphemeralOwner();
            if (owner == session) {
                return;
            }
            if (owner != 0 && formerSessions.contains(owner)) {
                // left from our old session, which the server has not yet expired: it would vanish soon
                LOG.info("{} is still held by old session {}; creating it again under {}", path, Long.toHexString(owner),
                        Long.toHexString(session));
                try {
                    client.delete().withVersion(stat.getVersion()).forPath(path);
                    deleted(path);
                } catch (KeeperException.NoNodeException | KeeperException.BadVersionException raced) {
                    // expired or changed meanwhile: look again
                }
                continue;
            }
            // another registry server's node (it rebound the instance), or made persistent: not ours any more
            forget(path);
            return;
        }
        throw new StoreException(path + " kept changing while it was being restored");
    }

    private record Read(ComponentEntry entry, long czxid) {
    }

    /** A node's entry as decoded at one version of the node (its creation and last change). */
    private record Decoded(long czxid, long mzxid, Read read) {
    }

    private final AtomicLong nodesDecoded = new AtomicLong();

    /** Nodes decoded into entries so far; for tests. */
    long nodesDecoded() {
        return nodesDecoded.get();
    }

    /** The entries lists from the cache decoded, by path: decoded again only when their node changed. */
    private final Map<String, Decoded> decoded = new java.util.concurrent.ConcurrentHashMap<>();

    private Optional<Read> read(String path) throws Exception {
        Stat stat = new Stat();
        byte[] data;
        try {
            data = client.getData().storingStatIn(stat).forPath(path);
        } catch (KeeperException.NoNodeException gone) {
            return Optional.empty();
        }
        return Optional.of(decode(path, data, stat));
    }

    private Read decode(String path, byte[] data, Stat stat) {
        nodesDecoded.incrementAndGet();
        if (data == null || data.length > MAX_DATA_BYTES) {
            throw new StoreException("ZooKeeper at " + ensemble + ": " + path + " holds no entry or one over "
                    + MAX_DATA_BYTES + " bytes");
        }
        try {
            return new Read(StoreFormat.decodeEntry(data), stat.getCzxid());
        } catch (IllegalArgumentException e) {
            throw new StoreException("ZooKeeper at " + ensemble + ": " + path + " is not a registry entry: "
                    + e.getMessage(), e);
        }
    }

    private List<String> children(String path) throws Exception {
        try {
            return client.getChildren().forPath(path);
        } catch (KeeperException.NoNodeException none) {
            return List.of();
        }
    }

    private static byte[] encode(ComponentEntry entry) {
        byte[] data = StoreFormat.encodeEntry(entry);
        if (data.length > MAX_DATA_BYTES) {
            throw new IllegalArgumentException("the entry is " + data.length + " bytes; the zookeeper store holds "
                    + "entries of up to " + MAX_DATA_BYTES);
        }
        return data;
    }

    private static CreateMode mode(ComponentEntry entry) {
        return entry.leased() ? CreateMode.EPHEMERAL : CreateMode.PERSISTENT;
    }

    private String namePath(String name) {
        return root + "/" + checkSegment(name);
    }

    private String path(String name, String instanceId) {
        return namePath(name) + "/" + checkSegment(instanceId);
    }

    /** Names and ids become path segments: no slash, no dot segments (the registry refuses them too). */
    private static String checkSegment(String s) {
        if (s.isEmpty() || s.contains("/") || s.equals(".") || s.equals("..")) {
            throw new IllegalArgumentException("'" + s + "' cannot name a znode");
        }
        return s;
    }

    private long currentSession() throws Exception {
        return client.getZookeeperClient().getZooKeeper().getSessionId();
    }

    private StoreException failure(String what, Exception e) {
        if (e instanceof StoreException se) {
            return se;
        }
        if (e instanceof IllegalArgumentException iae) {
            throw iae;
        }
        if (e instanceof InterruptedException) {
            Thread.currentThread().interrupt();
        }
        if (e instanceof KeeperException.ConnectionLossException || e instanceof KeeperException.SessionExpiredException
                || e instanceof KeeperException.OperationTimeoutException) {
            return new StoreException("ZooKeeper at " + ensemble + " cannot be reached (" + e.getMessage()
                    + ", after " + retries + " retries): " + what + " did not happen", e);
        }
        return new StoreException("ZooKeeper at " + ensemble + ": " + what + " failed: " + e, e);
    }

    /** Configures a {@link ZooKeeperRegistryStore}. */
    public static final class Builder {
        private final String ensemble;
        private String root = "/switchboard";
        private Duration sessionTimeout = Duration.ofSeconds(15);
        private Duration connectionTimeout = Duration.ofSeconds(5);
        private int retries = 3;

        private Builder(String ensemble) {
            this.ensemble = Objects.requireNonNull(ensemble, "ensemble");
            if (ensemble.isBlank()) {
                throw new IllegalArgumentException("the ZooKeeper ensemble is empty");
            }
        }

        /** The znode under which entries live (default {@code /switchboard}). */
        public Builder root(String path) {
            String p = path.endsWith("/") && path.length() > 1 ? path.substring(0, path.length() - 1) : path;
            if (!ROOT.matcher(p).matches() || p.contains("/./") || p.contains("/../") || p.endsWith("/.")
                    || p.endsWith("/..")) {
                throw new IllegalArgumentException("'" + path + "' is not a znode path like /switchboard");
            }
            root = p;
            return this;
        }

        /** How long ZooKeeper keeps this store's session, and so its ephemeral entries, after it goes silent. */
        public Builder sessionTimeout(Duration timeout) {
            sessionTimeout = timeout;
            return this;
        }

        /** How long one attempt waits for a connection. */
        public Builder connectionTimeout(Duration timeout) {
            connectionTimeout = timeout;
            return this;
        }

        /** How often an operation is retried on connection loss before it fails. */
        public Builder retries(int count) {
            retries = count;
            return this;
        }

        /**
         * Connects, waiting up to the connection timeout.
         *
         * @throws StoreException no server of the ensemble answered in time
         */
        public ZooKeeperRegistryStore start() {
            return new ZooKeeperRegistryStore(this);
        }
    }
}
