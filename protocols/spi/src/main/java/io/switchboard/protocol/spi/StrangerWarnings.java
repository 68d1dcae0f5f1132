package io.switchboard.protocol.spi;

/**
 * When a server warns of what any peer can make it do (a connection refused or displaced, a frame
 * that breaks the framing, a failed TLS handshake, a request that never arrives whole): the first
 * time and every {@value #EVERY}th, with the count so far, the others at debug. A peer that opens
 * connections in a loop then costs the log a line per hundred of them instead of one each.
 *
 * <pre>{@code
 * refusals.increment();
 * long n = refusals.sum();
 * if (StrangerWarnings.due(n)) {
 *     LOG.warn("refusing {} ({} refused so far)", peer, n);
 * }
 * }</pre>
 */
public final class StrangerWarnings {
    /** One warning in this many, after the first. */
    public static final int EVERY = 100;

    private StrangerWarnings() {
    }

    /** Whether the {@code count}th occurrence (counted from 1) is warned of. */
    public static boolean due(long count) {
        return count == 1 || (count > 0 && count % EVERY == 0);
    }
}
