package io.switchboard.protocol.spi;

import java.util.ArrayDeque;
import java.util.HashMap;
import java.util.Iterator;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.TreeSet;
import java.util.concurrent.CompletableFuture;

/**
 * The calls a {@link DeduplicatingInterceptor} remembers, bounded in bytes with a share per
 * identity: an identity holds at most {@code maxBytesPerIdentity}, giving up its own oldest calls
 * beyond it, and when all together pass {@code maxBytes} the largest share gives up its oldest. So
 * one caller's flood of fresh call ids evicts its own calls, never another's smaller set. A full
 * memory evicts on every new call: with more than {@value #ORDERED_FROM} identities the shares are
 * kept ordered by size, so that finding the largest does not walk every caller, under its user's
 * lock, for each call; with fewer, a walk costs less than keeping the order on every call. Not
 * thread-safe: its user holds a lock around every use. A protocol's server keeps its SOAP cancels
 * that came before their calls here too, each counted as one "byte" (no digest, no outcome).
 */
public final class RecentCalls {
    /** One call: who made it, what it asked (a digest), and its outcome once it has one. */
    public static final class Entry {
        final String identity;
        final String key;
        final byte[] digest;
        final CompletableFuture<Object> outcome;
        final long at;
        long bytes;
        boolean gone;

        Entry(String identity, String key, byte[] digest, CompletableFuture<Object> outcome, long at, long bytes) {
            this.identity = identity;
            this.key = key;
            this.digest = digest;
            this.outcome = outcome;
            this.at = at;
            this.bytes = bytes;
        }
    }

    /** One identity's calls, oldest first, and their bytes. */
    private static final class Share {
        final String identity;
        /** Tells shares of equal size apart: the older share is the larger. */
        final long seq;
        final ArrayDeque<Entry> order = new ArrayDeque<>();
        /** Changed only while the share is out of {@link #bySize} ({@link #resize}). */
        long bytes;

        Share(String identity, long seq) {
            this.identity = identity;
            this.seq = seq;
        }
    }

    private final long maxBytes;
    private final long maxBytesPerIdentity;
    /** Every call by operation and call id, in arrival order (so the expired ones are at the head). */
    private final LinkedHashMap<String, Entry> byKey = new LinkedHashMap<>();
    private final Map<String, Share> shares = new HashMap<>();
    /** Identities past which the shares are kept ordered by size; they stay so until half as many are left. */
    static final int ORDERED_FROM = 32;
    /** The shares, largest first, while there are many; null while a walk of them is cheaper. */
    private TreeSet<Share> bySize;
    private long bytes;
    private long sharesMade;
    /** Shares compared so far, walked or kept in order: what choosing the largest costs (for tests). */
    private long comparisons;

    public RecentCalls(long maxBytes, long maxBytesPerIdentity) {
        if (maxBytes <= 0 || maxBytesPerIdentity <= 0) {
            throw new IllegalArgumentException("the byte bounds must be positive");
        }
        this.maxBytes = maxBytes;
        this.maxBytesPerIdentity = Math.min(maxBytes, maxBytesPerIdentity);
    }

    public Entry get(String key) {
        return byKey.get(key);
    }

    /** Forgets the call {@code key}, if remembered; whether it was. */
    public boolean remove(String key) {
        Entry e = byKey.remove(key);
        if (e == null) {
            return false;
        }
        Share share = shares.get(e.identity);
        share.order.remove(e);
        forget(e, share);
        return true;
    }

    /** Remembers a new call (its key not remembered now), then evicts what the bounds require (possibly this call). */
    public Entry add(String identity, String key, byte[] digest, CompletableFuture<Object> outcome, long at, long size) {
        Entry e = new Entry(identity, key, digest, outcome, at, size);
        byKey.put(key, e);
        Share share = shares.get(identity);
        if (share == null) {
            share = new Share(identity, sharesMade++);
            shares.put(identity, share);
            share.order.addLast(e);
            share.bytes = size;
            bytes += size;
            if (bySize != null) {
                bySize.add(share);
            } else if (shares.size() > ORDERED_FROM) {
                bySize = new TreeSet<>(this::largerFirst);
                bySize.addAll(shares.values());
            }
        } else {
            share.order.addLast(e);
            resize(share, size);
        }
        enforce(share);
        return e;
    }

    /** Counts {@code more} bytes for a call remembered now (its outcome, once known), then evicts what the bounds require. */
    void grow(Entry e, long more) {
        if (e.gone) {
            return;
        }
        Share share = shares.get(e.identity);
        e.bytes += more;
        resize(share, more);
        enforce(share);
    }

    /** Forgets every call older than {@code retentionNanos} at {@code now}. */
    public void dropExpired(long now, long retentionNanos) {
        Iterator<Entry> it = byKey.values().iterator();
        while (it.hasNext()) {
            Entry e = it.next();
            if (now - e.at <= retentionNanos) {
                return;
            }
            it.remove();
            Share share = shares.get(e.identity);
            // the oldest call overall is the oldest of its identity too
            if (share.order.peekFirst() == e) {
                share.order.pollFirst();
            } else {
                share.order.remove(e);
            }
            forget(e, share);
        }
    }

    private void enforce(Share grown) {
        while (grown.bytes > maxBytesPerIdentity && !grown.order.isEmpty()) {
            evictOldest(grown);
        }
        while (bytes > maxBytes) {
            evictOldest(largest());
        }
    }

    private Share largest() {
        if (bySize != null) {
            return bySize.first();
        }
        Share largest = null;
        for (Share s : shares.values()) {
            if (largest == null || largerFirst(s, largest) < 0) {
                largest = s;
            }
        }
        return largest;
    }

    private void evictOldest(Share share) {
        Entry e = share.order.pollFirst();
        byKey.remove(e.key);
        forget(e, share);
    }

    /** After {@code e} left {@code share}'s order. */
    private void forget(Entry e, Share share) {
        e.gone = true;
        if (share.order.isEmpty()) {
            shares.remove(share.identity);
            if (bySize != null) {
                bySize.remove(share);
                if (shares.size() <= ORDERED_FROM / 2) {
                    bySize = null;
                }
            }
            share.bytes -= e.bytes;
            bytes -= e.bytes;
        } else {
            resize(share, -e.bytes);
        }
    }

    private int largerFirst(Share a, Share b) {
        comparisons++;
        int bySize = Long.compare(b.bytes, a.bytes);
        return bySize != 0 ? bySize : Long.compare(a.seq, b.seq);
    }

    /** Counts {@code delta} bytes more for {@code share}, keeping its place in {@link #bySize}. */
    private void resize(Share share, long delta) {
        if (bySize == null) {
            share.bytes += delta;
            bytes += delta;
            return;
        }
        bySize.remove(share);   // found by its old size: the order must not change under the set
        share.bytes += delta;
        bytes += delta;
        bySize.add(share);
    }

    public int size() {
        return byKey.size();
    }

    /** Identities with calls remembered now. */
    int identities() {
        return shares.size();
    }

    long comparisons() {
        return comparisons;
    }

    /** Whether the shares are kept ordered by size now. */
    boolean keptInOrder() {
        return bySize != null;
    }

    long bytes() {
        return bytes;
    }

    /** The bytes {@code identity}'s calls hold now. */
    public long bytes(String identity) {
        Share share = shares.get(identity);
        return share == null ? 0 : share.bytes;
    }
}
