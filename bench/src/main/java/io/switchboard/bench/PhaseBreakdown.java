package io.switchboard.bench;

import io.switchboard.protocol.spi.PhaseMarks;
import io.switchboard.protocol.spi.PhaseMarks.Phase;
import java.io.IOException;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * The phase breakdown of one call, as the SC2000 study's Gantt chart: the client and the server
 * JVM record {@link PhaseMarks} at the phase boundaries (serialize, send, arrive, deserialize,
 * dispatch, and back), calls of every protocol interleaved; each call's server marks are those
 * from its start to the next call's start (the server may finish after the client has its answer).
 * Both JVMs read {@code System.nanoTime()}, which on Linux is the machine-wide
 * {@code CLOCK_MONOTONIC}, so client and server marks share one time line (on a system where they
 * do not, the segments between the two sides are meaningless). A boundary that is missing from any
 * of a protocol's calls is left out for that protocol, its segment merged with the next.
 *
 * <pre>{@code
 * PhaseBreakdown.Recorder client = PhaseBreakdown.Recorder.install();   // JVM started with marks on
 * PhaseBreakdown breakdown = new PhaseBreakdown(peers, server, client);
 * List<PhaseBreakdown.Timing> timings = breakdown.run(Payload.of(Workload.LIST, 1000), 20, 200);
 * }</pre>
 */
public final class PhaseBreakdown {
    /** Lane of a segment in the Gantt chart. */
    enum Lane { CLIENT, WIRE, SERVER }

    /** A phase boundary: a mark of one side, its first or its last occurrence in a call. */
    private record Boundary(boolean server, Phase phase, boolean last, String segmentAfter) {
    }

    /** In call order; the segment after a boundary runs to the next boundary that the protocol marks. */
    private static final List<Boundary> BOUNDARIES = List.of(
            new Boundary(false, Phase.CALL_START, false, "client: stub and policy"),
            new Boundary(false, Phase.ENCODE_START, false, "client: serialize request"),
            new Boundary(false, Phase.ENCODE_END, true, "client: hand request to transport"),
            new Boundary(false, Phase.SEND_END, true, "request on the wire"),
            new Boundary(true, Phase.ARRIVED, false, "server: arrival to decoding thread"),
            new Boundary(true, Phase.DECODE_START, false, "server: deserialize request"),
            new Boundary(true, Phase.DECODE_END, true, "server: dispatch to operation"),
            new Boundary(true, Phase.INVOKE_START, false, "server: operation (echo)"),
            new Boundary(true, Phase.INVOKE_END, true, "server: operation to serializer"),
            new Boundary(true, Phase.ENCODE_START, false, "server: serialize response"),
            new Boundary(true, Phase.ENCODE_END, true, "server: hand response to transport"),
            new Boundary(true, Phase.SEND_END, true, "response on the wire"),
            new Boundary(false, Phase.ARRIVED, false, "client: arrival to decoding thread"),
            new Boundary(false, Phase.DECODE_START, false, "client: deserialize response"),
            new Boundary(false, Phase.DECODE_END, true, "client: return to caller"),
            new Boundary(false, Phase.CALL_END, true, null));

    /**
     * The server's marks are fetched every this many rounds, not after every call: fetching them
     * (a line to the server process and its answer) between two calls would run before every
     * call and leave the caches cold for it.
     */
    private static final int DRAIN_ROUNDS = 200;

    private final List<Peer> peers;
    private final ServerProcess server;
    private final Recorder client;
    private final List<String> notes = new ArrayList<>();

    PhaseBreakdown(List<Peer> peers, ServerProcess server, Recorder client) {
        this.peers = peers;
        this.server = server;
        this.client = client;
    }

    /** Remarks for the report: calls left out, protocols without marks. */
    List<String> notes() {
        return notes;
    }

    /**
     * One segment of one protocol's call: medians over the calls of its duration and of its start
     * (from the client's entry into the stub).
     */
    record Timing(String protocol, String segment, Lane lane, String from, String to, double medianMicros,
                  double p10Micros, double p90Micros, double startMicros, int calls) {
        double endMicros() {
            return startMicros + medianMicros;
        }
    }

    /**
     * Warm-up calls, then {@code reps} rounds of one call per protocol, interleaved; each answer is
     * checked. Returns every protocol's segments and, per protocol, its median round trip as the
     * segment {@code "round trip"}.
     */
    List<Timing> run(Payload payload, int warmup, int reps, me.tongfei.progressbar.ProgressBar progress) throws Exception {
        List<Peer> order = new ArrayList<>();   // the timed calls, in the order they ran
        List<long[][]> clientMarks = new ArrayList<>();
        List<long[]> serverMarks = new ArrayList<>();
        Map<Peer, List<Long>> roundTrips = new LinkedHashMap<>();
        peers.forEach(p -> roundTrips.put(p, new ArrayList<>()));
        for (int r = -warmup; r < reps; r++) {
            for (Peer peer : peers) {
                client.drain();
                long start = System.nanoTime();
                boolean marked = peer.marksCalls();   // a meta-stub marks its calls' start and end itself
                if (!marked) {
                    PhaseMarks.mark(Phase.CALL_START);
                }
                Object back = peer.roundTrip(payload);
                if (!marked) {
                    PhaseMarks.mark(Phase.CALL_END);
                }
                long elapsed = System.nanoTime() - start;
                if (!payload.matches(back)) {
                    throw new IllegalStateException(peer.name() + ": wrong answer: what came back differs from what was sent");
                }
                long[][] marks = client.drain();
                if (r >= 0) {
                    order.add(peer);
                    clientMarks.add(marks);
                    roundTrips.get(peer).add(elapsed);
                }
            }
            if (r == -1) {
                server.drainPhaseMarks();   // the warm-up's marks, dropped
            } else if (r >= 0 && r % DRAIN_ROUNDS == DRAIN_ROUNDS - 1) {
                serverMarks.addAll(Arrays.asList(parse(server.drainPhaseMarks())));
            }
            if (r >= 0) {
                progress.step();
            }
        }
        serverMarks.addAll(Arrays.asList(parse(server.drainPhaseMarks())));   // marks the server made after the last drain
        List<long[][]> calls = assign(clientMarks, serverMarks);
        List<Timing> timings = new ArrayList<>();
        for (Peer peer : peers) {
            List<long[][]> own = new ArrayList<>();
            for (int i = 0; i < order.size(); i++) {
                if (order.get(i) == peer) {
                    own.add(calls.get(i));
                }
            }
            timings.addAll(segments(peer.name(), own));
            long[] rt = roundTrips.get(peer).stream().mapToLong(Long::longValue).sorted().toArray();
            timings.add(new Timing(peer.name(), "round trip", Lane.CLIENT, "CALL_START", "CALL_END", quantile(rt, 0.5),
                    quantile(rt, 0.1), quantile(rt, 0.9), 0, rt.length));
        }
        return timings;
    }

    /**
     * Each call's marks: its client marks, and the server marks from its start to the next call's
     * start (the server may finish a little after the client has its answer), server phases stored
     * as {@code -1 - ordinal}. Server marks before the first call are dropped.
     */
    private static List<long[][]> assign(List<long[][]> clientMarks, List<long[]> serverMarks) {
        long[] starts = new long[clientMarks.size()];
        List<List<long[]>> calls = new ArrayList<>();
        for (int i = 0; i < starts.length; i++) {
            starts[i] = Long.MAX_VALUE;
            for (long[] m : clientMarks.get(i)) {
                if (m[0] == Phase.CALL_START.ordinal()) {
                    starts[i] = m[1];
                }
            }
            calls.add(new ArrayList<>(Arrays.asList(clientMarks.get(i))));
        }
        for (long[] m : serverMarks) {
            int i = Arrays.binarySearch(starts, m[1]);
            int call = i >= 0 ? i : -i - 2;   // the last call that started at or before the mark
            if (call >= 0) {
                calls.get(call).add(new long[] {-1 - m[0], m[1]});
            }
        }
        List<long[][]> result = new ArrayList<>();
        calls.forEach(c -> result.add(c.toArray(new long[0][])));
        return result;
    }

    private List<Timing> segments(String protocol, List<long[][]> calls) {
        List<Boundary> present = new ArrayList<>();
        for (Boundary b : BOUNDARIES) {
            if (calls.stream().allMatch(c -> time(c, b) != Long.MIN_VALUE)) {
                present.add(b);
            }
        }
        if (present.size() <= 2) {
            notes.add(protocol + ": no phase marks inside its calls (its transport is not instrumented, or its server "
                    + "marks fell outside the calls' windows); only its round trip is shown");
            return List.of();
        }
        List<Timing> result = new ArrayList<>();
        for (int i = 0; i + 1 < present.size(); i++) {
            Boundary a = present.get(i);
            Boundary b = present.get(i + 1);
            long[] durations = new long[calls.size()];
            long[] starts = new long[calls.size()];
            for (int k = 0; k < calls.size(); k++) {
                long[][] c = calls.get(k);
                long callStart = time(c, BOUNDARIES.get(0));
                durations[k] = time(c, b) - time(c, a);
                starts[k] = time(c, a) - callStart;
            }
            Arrays.sort(durations);
            Arrays.sort(starts);
            String segment = a.segmentAfter();
            int skipped = BOUNDARIES.indexOf(b) - BOUNDARIES.indexOf(a) - 1;
            if (skipped > 0) {   // the protocol has no mark in between: this segment covers the skipped ones too
                segment += " … " + BOUNDARIES.get(BOUNDARIES.indexOf(b) - 1).segmentAfter();
            }
            Lane lane = a.server() && b.server() ? Lane.SERVER : !a.server() && !b.server() ? Lane.CLIENT : Lane.WIRE;
            result.add(new Timing(protocol, segment, lane, side(a), side(b), quantile(durations, 0.5),
                    quantile(durations, 0.1), quantile(durations, 0.9), quantile(starts, 0.5), calls.size()));
        }
        return result;
    }

    private static String side(Boundary b) {
        return (b.server() ? "server " : "client ") + b.phase().name() + (b.last() ? " (last)" : "");
    }

    /** The boundary's time in a call, or Long.MIN_VALUE when the call has no such mark. */
    private static long time(long[][] call, Boundary b) {
        long code = b.server() ? -1 - b.phase().ordinal() : b.phase().ordinal();
        long t = Long.MIN_VALUE;
        for (long[] m : call) {
            if (m[0] == code) {
                if (!b.last()) {
                    return m[1];
                }
                t = m[1];
            }
        }
        return t;
    }

    static double quantile(long[] sortedNanos, double q) {
        if (sortedNanos.length == 0) {
            return Double.NaN;
        }
        double pos = q * (sortedNanos.length - 1);
        int lo = (int) Math.floor(pos);
        int hi = Math.min(lo + 1, sortedNanos.length - 1);
        return (sortedNanos[lo] + (pos - lo) * (sortedNanos[hi] - sortedNanos[lo])) / 1e3;
    }

    private static long[][] parse(String line) {
        if (line.isBlank()) {
            return new long[0][];
        }
        String[] pairs = line.trim().split(",");
        long[][] marks = new long[pairs.length][];
        for (int i = 0; i < pairs.length; i++) {
            int colon = pairs[i].indexOf(':');
            marks[i] = new long[] {Long.parseLong(pairs[i].substring(0, colon)), Long.parseLong(pairs[i].substring(colon + 1))};
        }
        return marks;
    }

    /** Collects this JVM's marks from every thread until drained. */
    static final class Recorder implements PhaseMarks.Sink {
        private final List<long[]> marks = new ArrayList<>();

        static Recorder install() throws IOException {
            if (!PhaseMarks.ENABLED) {
                throw new IOException("phase marks are off in this JVM: start it with -Dswitchboard.phases=true");
            }
            Recorder r = new Recorder();
            PhaseMarks.install(r);
            return r;
        }

        @Override
        public synchronized void mark(Phase phase, long nanoTime) {
            marks.add(new long[] {phase.ordinal(), nanoTime});
        }

        synchronized long[][] drain() {
            long[][] all = marks.toArray(new long[0][]);
            marks.clear();
            return all;
        }
    }

    /** The server JVM's recorder; {@link #drain} answers the {@code phases} command as {@code ORDINAL:NANOS,...}. */
    static final class ServerMarks {
        private final Recorder recorder;

        private ServerMarks(Recorder recorder) {
            this.recorder = recorder;
        }

        static ServerMarks install() throws IOException {
            return new ServerMarks(Recorder.install());
        }

        String drain() {
            StringBuilder b = new StringBuilder();
            for (long[] m : recorder.drain()) {
                if (b.length() > 0) {
                    b.append(',');
                }
                b.append(m[0]).append(':').append(m[1]);
            }
            return b.toString();
        }
    }
}
