package io.switchboard.protocol;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;

import org.junit.jupiter.api.Test;

class TraceContextTest {
    static final String PARENT = "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01";

    @Test
    void aW3CTraceparentIsKeptWithItsTracestate() {
        TraceContext t = TraceContext.of(PARENT, "rojo=00f067aa0ba902b7,congo=t61rcWkgMzE");
        assertEquals(PARENT, t.traceparent());
        assertEquals("rojo=00f067aa0ba902b7,congo=t61rcWkgMzE", t.tracestate());
        assertNull(TraceContext.of(PARENT, null).tracestate());
    }

    @Test
    void aMalformedTraceparentMakesNoContext() {
        assertNull(TraceContext.of(null, "a=b"));
        assertNull(TraceContext.of("", null));
        assertNull(TraceContext.of(PARENT.toUpperCase(), null), "upper-case hex");
        assertNull(TraceContext.of(PARENT.substring(1), null), "too short");
        assertNull(TraceContext.of(PARENT + "-00", null), "version 00 has four fields");
        assertNull(TraceContext.of("ff" + PARENT.substring(2), null), "version ff is invalid");
        assertNull(TraceContext.of("00-00000000000000000000000000000000-00f067aa0ba902b7-01", null), "zero trace id");
        assertNull(TraceContext.of("00-4bf92f3577b34da6a3ce929d0e0e4736-0000000000000000-01", null), "zero span id");
        assertNull(TraceContext.of("00-4bf92f3577b34da6a3ce929d0e0e4736_00f067aa0ba902b7-01", null));
        assertNull(TraceContext.of("01" + PARENT.substring(2) + "-" + "x".repeat(200), null), "over the length bound");
        assertEquals("01" + PARENT.substring(2) + "-future", TraceContext.of("01" + PARENT.substring(2) + "-future",
                null).traceparent(), "a later version may append fields");
    }

    @Test
    void aTracestateTooLongOrNotPrintableIsDropped() {
        assertNull(TraceContext.of(PARENT, "a=" + "b".repeat(TraceContext.MAX_TRACESTATE)).tracestate());
        assertNull(TraceContext.of(PARENT, "a=b\nc=d").tracestate());
        assertNull(TraceContext.of(PARENT, "").tracestate());
    }

    @Test
    void serverCallContextHoldsTheTraceForTheCallAndRestoresWhatWasThere() {
        TraceContext outer = TraceContext.of(PARENT, null);
        try (ServerCallContext.Scope a = ServerCallContext.enter(null, outer)) {
            assertEquals(outer, ServerCallContext.trace());
            try (ServerCallContext.Scope b = ServerCallContext.enter(() -> false)) {
                assertNull(ServerCallContext.trace(), "a call without a trace context has none");
            }
            assertEquals(outer, ServerCallContext.trace());
        }
        assertNull(ServerCallContext.trace());
    }
}
