package io.switchboard.protocol;

/**
 * The W3C trace context of one call (<a href="https://www.w3.org/TR/trace-context/">Trace
 * Context</a>): the {@code traceparent} and {@code tracestate} values, as a tracer injects them on
 * the client and extracts them on the server. Transports carry it as they carry the call id: SOAP
 * as a header element {@code <sb:trace traceparent="..." tracestate="..."/>}, gRPC as the metadata
 * {@code traceparent} and {@code tracestate}; a protocol server hands what it read to the
 * operation's thread ({@link ServerCallContext#trace()}). Protocols know nothing of tracers: the
 * client's tracing interceptor sets {@link #OPTION}, the server's tracing skeleton reads it.
 *
 * <p>Both values come off the wire, so {@link #of} checks them: a {@code traceparent} that is not
 * {@code version-traceid-spanid-flags} in lower-case hex (an all-zero id, version {@code ff}, more
 * than {@value #MAX_TRACEPARENT} characters) makes no context; a {@code tracestate} longer than
 * {@value #MAX_TRACESTATE} characters or with characters outside printable ASCII is dropped. A bad
 * header never fails a call: the server runs it in a new trace.
 *
 * <pre>{@code
 * TraceContext trace = TraceContext.of("00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01", null);
 * echo.withOptions(CallOptions.DEFAULT.with(TraceContext.OPTION, trace)).empty();
 * }</pre>
 */
public final class TraceContext {
    /** The option the transports read: the context to send with the call, or null for none. */
    public static final CallOptions.Key<TraceContext> OPTION = CallOptions.Key.of("switchboard.trace", null);
    /** The W3C names, used as gRPC metadata keys and SOAP header attributes. */
    public static final String TRACEPARENT = "traceparent";
    public static final String TRACESTATE = "tracestate";
    /** Version 00 has 55 characters; later versions may append fields, within this bound. */
    public static final int MAX_TRACEPARENT = 128;
    /** The W3C's 32 list members of at most 256 characters would allow more; 512 is what a propagator keeps. */
    public static final int MAX_TRACESTATE = 512;

    private final String traceparent;
    private final String tracestate;

    private TraceContext(String traceparent, String tracestate) {
        this.traceparent = traceparent;
        this.tracestate = tracestate;
    }

    /**
     * The context of these header values, or null when {@code traceparent} is absent or malformed;
     * a malformed or too long {@code tracestate} is left out.
     */
    public static TraceContext of(String traceparent, String tracestate) {
        if (!validParent(traceparent)) {
            return null;
        }
        return new TraceContext(traceparent, validState(tracestate) ? tracestate : null);
    }

    public String traceparent() {
        return traceparent;
    }

    /** Null when there was none (or it was not acceptable). */
    public String tracestate() {
        return tracestate;
    }

    static boolean validParent(String s) {
        if (s == null || s.length() < 55 || s.length() > MAX_TRACEPARENT) {
            return false;
        }
        if (s.charAt(2) != '-' || s.charAt(35) != '-' || s.charAt(52) != '-') {
            return false;
        }
        if (!hex(s, 0, 2) || !hex(s, 3, 35) || !hex(s, 36, 52) || !hex(s, 53, 55)) {
            return false;
        }
        if (s.startsWith("ff") || zeros(s, 3, 35) || zeros(s, 36, 52)) {
            return false;
        }
        if (s.startsWith("00")) {
            return s.length() == 55;
        }
        if (s.length() > 55 && s.charAt(55) != '-') {
            return false;
        }
        for (int i = 55; i < s.length(); i++) {
            char c = s.charAt(i);
            if (c < 0x21 || c > 0x7e) {
                return false;
            }
        }
        return true;
    }

    static boolean validState(String s) {
        if (s == null || s.isEmpty() || s.length() > MAX_TRACESTATE) {
            return false;
        }
        for (int i = 0; i < s.length(); i++) {
            char c = s.charAt(i);
            if (c < 0x20 || c > 0x7e) {
                return false;
            }
        }
        return true;
    }

    private static boolean hex(String s, int from, int to) {
        for (int i = from; i < to; i++) {
            char c = s.charAt(i);
            if (!((c >= '0' && c <= '9') || (c >= 'a' && c <= 'f'))) {
                return false;
            }
        }
        return true;
    }

    private static boolean zeros(String s, int from, int to) {
        for (int i = from; i < to; i++) {
            if (s.charAt(i) != '0') {
                return false;
            }
        }
        return true;
    }

    @Override
    public String toString() {
        return tracestate == null ? traceparent : traceparent + ";" + tracestate;
    }
}
