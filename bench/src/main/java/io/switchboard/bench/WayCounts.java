package io.switchboard.bench;

import io.switchboard.metastub.CallRecord;
import io.switchboard.protocol.spi.Protocols;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.stream.Collectors;

/**
 * How a policy row's timed calls in one cell went: how many each protocol answered, tcp and gRPC
 * split by their way as the pinned rows are named ({@code tcp-unix} and {@code grpc-unix} over the
 * server's Unix domain sockets, {@code tcp} and {@code grpc} over TCP), and how many of those
 * answers came from the failsafe's fallback. A
 * failed attempt is not counted: the attempt that answered after it is, or the cell fails.
 *
 * <p>A call listener on the calling thread only holds each record ({@link #hold}: one store);
 * the records are counted once the call's time is taken ({@link #countHeld}), so that a policy row
 * does not pay, inside its timed calls, for bookkeeping the pinned rows do not have (finding a
 * record's way compares it with the protocols' names). Neither allocates or takes a lock.
 *
 * <pre>{@code
 * WayCounts ways = new WayCounts();
 * ways.hold(record);           // from a CallListener, for each timed call's attempts
 * ways.countHeld();            // after the call's time is taken
 * ways.note();                 // "calls over tcp-unix 1,998, grpc 2"
 * }</pre>
 */
public final class WayCounts {
    private static final String UNIX = "unix";
    private static final String UNIX_SUFFIX = "-" + UNIX;

    /** Every protocol on the class path by name, then each with a Unix socket's way ({@code tcp-unix}): what a call can go over. */
    private final String[] ways;
    /** How many of {@link #ways} are protocols; a protocol's Unix way follows them. */
    private final int protocols;
    private final long[] answered;
    private long fallbacks;
    /** The records of the call under way, not counted yet; a call of more attempts than it holds has its first counted at once. */
    private final CallRecord[] held = new CallRecord[8];
    private int heldCount;

    WayCounts() {
        List<String> names = new ArrayList<>(Protocols.names());
        protocols = names.size();
        names.addAll(SwitchboardPeer.UNIX_WAYS.keySet());
        ways = names.toArray(String[]::new);
        answered = new long[ways.length];
    }

    /** Keeps an attempt's record until {@link #countHeld}: what a listener does inside a timed call. */
    void hold(CallRecord r) {
        if (heldCount == held.length) {
            countHeld();
        }
        held[heldCount++] = r;
    }

    /** Counts the records held since the last call of this, and lets them go. */
    void countHeld() {
        for (int i = 0; i < heldCount; i++) {
            add(held[i]);
            held[i] = null;
        }
        heldCount = 0;
    }

    /** Counts one attempt's record: by its protocol and way if it answered, nothing if it failed. */
    void add(CallRecord r) {
        if (!r.succeeded()) {
            return;
        }
        int way = way(r.protocol(), r.via());
        if (way >= 0) {
            answered[way]++;
            if (r.fallback()) {
                fallbacks++;
            }
        }
    }

    /** The index of the way named {@code protocol} ({@code protocol-unix} over a Unix socket), compared in place: no name is built per call. */
    private int way(String protocol, String via) {
        boolean unix = UNIX.equals(via);
        for (int i = unix ? protocols : 0; i < ways.length; i++) {
            String w = ways[i];
            if (unix ? w.length() == protocol.length() + UNIX_SUFFIX.length() && w.startsWith(protocol)
                    && w.endsWith(UNIX_SUFFIX) : w.equals(protocol)) {
                return i;
            }
        }
        return -1;
    }

    /** Calls that were answered, over all ways. */
    long total() {
        long n = 0;
        for (long a : answered) {
            n += a;
        }
        return n;
    }

    /** Answers that came from the failsafe's fallback (counted in their protocol's figure too). */
    long fallbacks() {
        return fallbacks;
    }

    /** For the cell's note: {@code calls over tcp-unix 1,996, grpc-unix 2, soap 2 (2 fallbacks)}, most used first. */
    String note() {
        String over = counted().stream().map(i -> ways[i] + " " + String.format(Locale.ROOT, "%,d", answered[i]))
                .collect(Collectors.joining(", "));
        return "calls over " + (over.isEmpty() ? "none" : over)
                + (fallbacks == 0 ? "" : " (" + fallbacks + (fallbacks == 1 ? " fallback)" : " fallbacks)"));
    }

    /** For a CSV column, without commas: {@code tcp-unix:1996 grpc:2 soap:2}, most used first. */
    String csv() {
        return counted().stream().map(i -> ways[i] + ":" + answered[i]).collect(Collectors.joining(" "));
    }

    /** The ways that answered calls, most calls first, ties in protocol order. */
    private List<Integer> counted() {
        List<Integer> used = new ArrayList<>();
        for (int i = 0; i < ways.length; i++) {
            if (answered[i] > 0) {
                used.add(i);
            }
        }
        used.sort((a, b) -> Long.compare(answered[b], answered[a]));
        return used;
    }
}
