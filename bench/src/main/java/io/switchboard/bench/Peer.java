package io.switchboard.bench;

/**
 * The client side of one protocol under test. The server side of every peer runs in
 * {@link BenchServer}, in another JVM.
 */
interface Peer extends AutoCloseable {
    /** The protocol's name in the results: {@code socket}, {@code rmi}, {@code soap}, ... */
    String name();

    /**
     * Whether a round trip marks its own {@code CALL_START} and {@code CALL_END} phase marks: true
     * for peers that call through a meta-stub, whose chain marks them when phase marks are on
     * ({@code PhaseMarkInterceptor}); otherwise the phase breakdown marks them around the call.
     */
    default boolean marksCalls() {
        return false;
    }

    /**
     * From now on, counts which protocol (and way) each of this peer's calls takes in {@code ways},
     * or stops counting when it is null; returns whether it counts at all: only a peer that leaves
     * each call's protocol to a selection policy does, a pinned one ignores this.
     */
    default boolean countWays(WayCounts ways) {
        return false;
    }

    /** One round trip of the payload; returns what came back, unchecked. */
    Object roundTrip(Payload payload) throws Exception;

    /**
     * Bytes the client sent for one request of this payload, protocol headers included, measured
     * on an extra call that is not timed; -1 when this peer cannot count them.
     */
    long requestBytes(Payload payload) throws Exception;

    @Override
    void close();

    /** A call that failed for a reason the results should name (a stack overflow, a refusal). */
    final class Failure extends Exception {
        private static final long serialVersionUID = 1L;

        Failure(String reason) {
            super(reason);
        }
    }
}
