package io.switchboard.protocol.spi;

/**
 * Benchmark-only timestamps at the phase boundaries of a call (encode, arrive, decode, ...), for
 * the phase breakdown of {@code ./switchboard bench --phases}. Off unless the JVM runs with
 * {@code -Dswitchboard.phases=true}: {@link #ENABLED} is a constant, so when it is false the JIT
 * compiler drops every {@link #mark} call and the normal path pays nothing.
 *
 * <pre>{@code
 * // java -Dswitchboard.phases=true ...
 * PhaseMarks.install((phase, nanos) -> events.add(new long[] {phase.ordinal(), nanos}));
 * PhaseMarks.mark(PhaseMarks.Phase.ENCODE_START);   // in a transport: records System.nanoTime()
 * }</pre>
 */
public final class PhaseMarks {
    /** Whether marks are recorded at all in this JVM (system property {@code switchboard.phases}). */
    public static final boolean ENABLED = Boolean.getBoolean("switchboard.phases");

    private static volatile Sink sink;

    private PhaseMarks() {
    }

    /** Phase boundaries; the JVM that records a mark says whether it is the client's or the server's. */
    public enum Phase {
        /** The caller entered the stub (recorded by the benchmark, not by transports). */
        CALL_START,
        /** A message starts to be encoded. */
        ENCODE_START,
        /** A message is encoded (for SOAP, written into the HTTP stream: encoding and sending overlap). */
        ENCODE_END,
        /** The last byte of a message was handed to the transport. */
        SEND_END,
        /** The first part of a message arrived on the transport's I/O thread. */
        ARRIVED,
        /** The decoding thread has the first part of a message in hand. */
        DECODE_START,
        /** A message is decoded. */
        DECODE_END,
        /** The implementation starts (recorded by {@link PhaseMarkInterceptor}, in a component server's chain). */
        INVOKE_START,
        /** The implementation returned (recorded by {@link PhaseMarkInterceptor}). */
        INVOKE_END,
        /** The caller has the answer (recorded by the benchmark). */
        CALL_END
    }

    /** Receives marks, on whatever thread reached the boundary. */
    @FunctionalInterface
    public interface Sink {
        void mark(Phase phase, long nanoTime);
    }

    /** Starts recording into {@code s} (null stops); refused when this JVM was not started with marks on. */
    public static void install(Sink s) {
        if (!ENABLED) {
            throw new IllegalStateException("phase marks are off: start the JVM with -Dswitchboard.phases=true");
        }
        sink = s;
    }

    /** Records {@code phase} now, if marks are on and a sink is installed. */
    public static void mark(Phase phase) {
        if (ENABLED) {
            Sink s = sink;
            if (s != null) {
                s.mark(phase, System.nanoTime());
            }
        }
    }
}
