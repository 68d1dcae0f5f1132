package io.switchboard.metastub;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

import io.switchboard.protocol.CallOptions;
import io.switchboard.testing.conformance.ConformanceComponent;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CopyOnWriteArrayList;
import org.junit.jupiter.api.Test;

/**
 * The phase marks step alone, with its marks going to a list (the JVM running the tests has phase
 * marks off, so the step is driven directly): the call's start before anything below runs, its end
 * once the outcome is there, blocking, asynchronous or failed.
 */
class PhaseMarkInterceptorTest {
    private final List<String> events = new CopyOnWriteArrayList<>();
    private final PhaseMarkInterceptor marks = new PhaseMarkInterceptor(phase -> events.add(phase.name()));

    private static ClientCall call(CompletableFuture<Object> caller) {
        return new ClientCall("Conformance", ConformanceComponent.DESCRIPTOR.operation("ping"), null,
                CallOptions.DEFAULT, caller);
    }

    @Test
    void aBlockingCallIsMarkedAroundEverythingBelow() {
        ClientInterceptor.Chain below = c -> {
            events.add("below");
            return CompletableFuture.completedFuture("answer");
        };
        assertEquals("answer", marks.intercept(call(null), below).join());
        assertEquals(List.of("CALL_START", "below", "CALL_END"), events);
    }

    @Test
    void anAsynchronousCallIsMarkedEndedWhenItsOutcomeArrives() {
        CompletableFuture<Object> attempt = new CompletableFuture<>();
        CompletableFuture<Object> f = marks.intercept(call(new CompletableFuture<>()), c -> attempt);
        assertEquals(List.of("CALL_START"), events, "not ended while the attempt is under way");
        attempt.complete("answer");
        assertEquals("answer", f.join());
        assertEquals(List.of("CALL_START", "CALL_END"), events);
    }

    @Test
    void aFailedCallIsMarkedEndedToo() {
        CompletableFuture<Object> f = marks.intercept(call(null),
                c -> CompletableFuture.failedFuture(new IllegalStateException("no")));
        assertThrows(Exception.class, f::join);
        assertEquals(List.of("CALL_START", "CALL_END"), events);
        events.clear();
        assertThrows(IllegalStateException.class, () -> marks.intercept(call(null), c -> {
            throw new IllegalStateException("thrown before anything was sent");
        }));
        assertEquals(List.of("CALL_START", "CALL_END"), events);
    }
}
