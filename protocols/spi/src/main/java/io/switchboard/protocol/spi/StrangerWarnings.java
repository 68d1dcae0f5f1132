package io.switchboard.protocol.spi;

import java.util.Arrays;
import java.util.concurrent.atomic.LongAdder;
import org.slf4j.Logger;

/**
 * What any peer can make a server do once per connection (a handshake refused, a frame that breaks
 * the framing, a request that never arrives whole), counted and logged: at WARN the first time and
 * every {@value #EVERY}th, with the count so far, the others at DEBUG. A peer that opens
 * connections in a loop then costs the log a line per hundred of them instead of one each.
 *
 * <pre>{@code
 * private final StrangerWarnings tlsRefusals = new StrangerWarnings("refused at TLS");
 * tlsRefusals.log(LOG, "refused a connection from {} at TLS: {}", peer, reason);
 * // WARN refused a connection from /10.0.0.7:51234 at TLS: Empty client certificate chain (1 refused at TLS so far)
 * long refused = tlsRefusals.count();
 * }</pre>
 *
 * <p>A count kept elsewhere (a listener's shares) is judged by {@link #due} alone.
 */
public final class StrangerWarnings {
    /** One warning in this many, after the first. */
    public static final int EVERY = 100;

    private final LongAdder count = new LongAdder();
    private final String countSuffix;

    /** @param counted what the count is of, as a warning ends: "(N <i>counted</i> so far)" */
    public StrangerWarnings(String counted) {
        this.countSuffix = " ({} " + counted + " so far)";
    }

    /** Counts one occurrence and logs {@code format} with {@code arguments} (none of them a throwable). */
    public void log(Logger log, String format, Object... arguments) {
        count.increment();
        long n = count.sum();
        if (due(n)) {
            Object[] withCount = Arrays.copyOf(arguments, arguments.length + 1);
            withCount[arguments.length] = n;
            log.warn(format + countSuffix, withCount);
        } else {
            log.debug(format, arguments);
        }
    }

    /** Occurrences counted so far. */
    public long count() {
        return count.sum();
    }

    /** Whether the {@code count}th occurrence (counted from 1) is warned of. */
    public static boolean due(long count) {
        return count == 1 || (count > 0 && count % EVERY == 0);
    }
}
