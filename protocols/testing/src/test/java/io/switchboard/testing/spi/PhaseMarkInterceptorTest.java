package io.switchboard.testing.spi;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.assertFalse;

import io.switchboard.protocol.ServerCall;
import io.switchboard.protocol.spi.PhaseMarkInterceptor;
import io.switchboard.protocol.spi.PhaseMarks;
import io.switchboard.protocol.spi.PhaseMarks.Phase;
import io.switchboard.testing.conformance.ConformanceComponent;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;

/**
 * The benchmark's server step alone. {@code PhaseMarks.ENABLED} is read once per JVM and off in
 * this one, so the step records into a sink of the test's ({@link PhaseMarkInterceptor#into});
 * the bench's own test ({@code BenchCommandTest}, marks on) covers the path through {@code PhaseMarks}.
 */
class PhaseMarkInterceptorTest {
    private final List<String> events = new ArrayList<>();
    private final List<Long> times = new ArrayList<>();
    private final PhaseMarkInterceptor marks = PhaseMarkInterceptor.into((phase, nanos) -> {
        events.add(phase.name());
        times.add(nanos);
    });
    private final ServerCall call = new ServerCall("Echo", ConformanceComponent.DESCRIPTOR, "grpc",
            ConformanceComponent.DESCRIPTOR.operation("ping"), null, null);

    @Test
    void marksTheStartAndTheEndOfTheRunAroundTheNextStep() throws Exception {
        Object answer = new Object();
        Object back = marks.intercept(call, c -> {
            events.add("run");
            return answer;
        });

        assertSame(answer, back);
        assertEquals(List.of(Phase.INVOKE_START.name(), "run", Phase.INVOKE_END.name()), events);
        assertTrue(times.get(1) >= times.get(0), "System.nanoTime() at each boundary");
    }

    @Test
    void marksTheEndWhenTheRunFails() {
        assertThrows(IllegalStateException.class, () -> marks.intercept(call, c -> {
            throw new IllegalStateException("broken");
        }));

        assertEquals(List.of(Phase.INVOKE_START.name(), Phase.INVOKE_END.name()), events);
    }

    @Test
    void theSharedInstanceOnlyHandsTheCallOnWhileMarksAreOffInThisJvm() throws Exception {
        assertFalse(PhaseMarks.ENABLED, "the tests run without -Dswitchboard.phases=true, as a deployment does");
        assertThrows(IllegalStateException.class, () -> PhaseMarks.install((phase, nanos) -> events.add(phase.name())));
        assertEquals("ran", PhaseMarkInterceptor.INSTANCE.intercept(call, c -> "ran"));
        assertTrue(events.isEmpty());
    }
}
