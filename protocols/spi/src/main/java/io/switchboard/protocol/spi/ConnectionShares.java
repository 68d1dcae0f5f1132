package io.switchboard.protocol.spi;

import java.util.HashMap;
import java.util.LinkedHashSet;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * A server's connections by remote address, within two limits: at most {@code maxPerAddress} from
 * one address and {@code maxConnections} in all. A newcomer over either limit does not wait and is
 * not refused while some connection of the same share is stalled: the connection stalled longest
 * (idle, or a request begun and not finished) is evicted to admit it, as Jetty's and Netty's
 * connection limits close the least useful connection rather than the newest. Only when every
 * connection of the share is working is the newcomer refused. So a flood of stalled connections
 * from one host costs that host its own oldest ones, and a client of the same host still gets in.
 *
 * <pre>{@code
 * ConnectionShares shares = new ConnectionShares(512, 128);
 * ConnectionShares.Admission a = shares.admit(member);   // on accept
 * if (!a.admitted()) { refuse(); } else if (a.evicted() != null) { a.evicted().evict(); }
 * shares.leave(member);                                   // on close
 * }</pre>
 *
 * Thread-safe; decisions take one lock and a scan of the connections of the share (a few hundred).
 */
public final class ConnectionShares {
    /**
     * Refused connections a listener lets answer their calls "busy, not run" at a time, each for
     * at most {@link #REFUSED_LIFETIME_MILLIS}: a client then knows its call never ran, where a
     * connection closed at once reads as one that may have run it. Those past it are closed at once.
     */
    public static final int MAX_REFUSED_ANSWERING = 16;
    /** How long a refused connection that brings no call lasts. */
    public static final long REFUSED_LIFETIME_MILLIS = 2_000;

    private final AtomicInteger refusedAnswering = new AtomicInteger();
    private final int maxConnections;
    private final int maxPerAddress;
    private final Map<Object, Set<Member>> byAddress = new HashMap<>();
    private int open;
    private long evictions;
    private long refusals;

    /** One connection as the shares see it. */
    public interface Member {
        /** The remote address its share is counted by (an {@code InetAddress}, or any key for other sockets). */
        Object address();

        /**
         * Since when (System.nanoTime) it has been stalled: idle, or in a request whose bytes stopped
         * coming; {@link Long#MAX_VALUE} while it is working (a call running, an answer going out).
         */
        long stalledSinceNanos();

        /**
         * Claims it for eviction if it is still stalled (it may have begun to work since it was
         * chosen); true if it is claimed, and will be closed with {@link #evict}.
         */
        default boolean claim() {
            return stalledSinceNanos() != Long.MAX_VALUE;
        }

        /** Closes it, to admit another; called outside the shares' lock. */
        void evict();
    }

    /**
     * What became of a newcomer: admitted (perhaps in place of {@code evicted}, which the caller
     * closes), or refused with a reason.
     */
    public record Admission(boolean admitted, Member evicted, String refusal) {
    }

    /** Shares of {@code maxConnections} connections, at most {@code maxPerAddress} of them from one address. */
    public ConnectionShares(int maxConnections, int maxPerAddress) {
        if (maxConnections <= 0 || maxPerAddress <= 0) {
            throw new IllegalArgumentException("connection limits must be positive: " + maxConnections + ", "
                    + maxPerAddress);
        }
        this.maxConnections = maxConnections;
        this.maxPerAddress = maxPerAddress;
    }

    /**
     * Claims a place for a refused connection to answer its calls "busy, not run"; false when
     * {@link #MAX_REFUSED_ANSWERING} already do (close it at once). A claim is given back with
     * {@link #refusedAnswered} when that connection closes.
     */
    public boolean claimRefusedAnswer() {
        // never counted past the cap, not even for a moment: an increment taken back would show
        // MAX_REFUSED_ANSWERING + 1 to anyone reading the count meanwhile
        for (int now = refusedAnswering.get(); now < MAX_REFUSED_ANSWERING; now = refusedAnswering.get()) {
            if (refusedAnswering.compareAndSet(now, now + 1)) {
                return true;
            }
        }
        return false;
    }

    /** Gives back a refused connection's place ({@link #claimRefusedAnswer}) as it closes. */
    public void refusedAnswered() {
        refusedAnswering.decrementAndGet();
    }

    /** Refused connections answering their calls now. */
    public int refusedAnswering() {
        return refusedAnswering.get();
    }

    /** Admits {@code newcomer}, evicting the longest stalled connection of its share if that is full. */
    public synchronized Admission admit(Member newcomer) {
        Set<Member> mine = byAddress.get(newcomer.address());
        Member evicted = null;
        if (mine != null && mine.size() >= maxPerAddress) {
            evicted = claimLongestStalled(mine);
            if (evicted == null) {
                refusals++;
                return new Admission(false, null, mine.size() + " connections from " + newcomer.address()
                        + " are open and working, the limit per address");
            }
        } else if (open >= maxConnections) {
            evicted = claimLongestStalled(null);
            if (evicted == null) {
                refusals++;
                return new Admission(false, null, open + " connections are open and working, the server's limit");
            }
        }
        if (evicted != null) {
            forget(evicted);
            evictions++;
        }
        byAddress.computeIfAbsent(newcomer.address(), k -> new LinkedHashSet<>()).add(newcomer);
        open++;
        return new Admission(true, evicted, null);
    }

    /** A connection closed (or was evicted); idempotent. */
    public synchronized void leave(Member member) {
        forget(member);
    }

    private void forget(Member member) {
        Set<Member> mine = byAddress.get(member.address());
        if (mine != null && mine.remove(member)) {
            open--;
            if (mine.isEmpty()) {
                byAddress.remove(member.address());
            }
        }
    }

    /** The longest stalled of {@code among} (null: every connection) that could be claimed, or null. */
    private Member claimLongestStalled(Set<Member> among) {
        Set<Member> busy = new java.util.HashSet<>();
        while (true) {
            Member best = null;
            long bestSince = Long.MAX_VALUE;
            for (Set<Member> set : among == null ? byAddress.values() : java.util.List.of(among)) {
                for (Member m : set) {
                    long since = m.stalledSinceNanos();
                    if (since != Long.MAX_VALUE && !busy.contains(m) && (best == null || since - bestSince < 0)) {
                        best = m;
                        bestSince = since;
                    }
                }
            }
            if (best == null || best.claim()) {
                return best;
            }
            busy.add(best);   // it began to work meanwhile: look again without it
        }
    }

    /** Connections counted now. */
    public synchronized int open() {
        return open;
    }

    /** Connections counted now from {@code address}. */
    public synchronized int open(Object address) {
        Set<Member> mine = byAddress.get(address);
        return mine == null ? 0 : mine.size();
    }

    /** Connections evicted so far to admit others. */
    public synchronized long evictions() {
        return evictions;
    }

    /** Newcomers refused so far because every connection of their share was working. */
    public synchronized long refusals() {
        return refusals;
    }

    public int maxConnections() {
        return maxConnections;
    }

    public int maxPerAddress() {
        return maxPerAddress;
    }
}
