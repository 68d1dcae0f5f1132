package io.switchboard.metastub;

import io.switchboard.protocol.spi.PhaseMarks;
import io.switchboard.protocol.spi.PhaseMarks.Phase;
import java.util.concurrent.CompletableFuture;
import java.util.function.Consumer;

/**
 * Marks {@link Phase#CALL_START} when a call enters the meta-stub and {@link Phase#CALL_END} when
 * its outcome is there (every attempt included), for the phase breakdown of {@code ./switchboard
 * bench --phases}. A meta-stub puts it first in its chain only when {@link PhaseMarks#ENABLED} (a
 * constant), so a JVM without phase marks has no such step at all.
 */
final class PhaseMarkInterceptor implements ClientInterceptor {
    private final Consumer<Phase> marks;

    /** @param marks where each mark goes: {@code PhaseMarks::mark}, or a test's list */
    PhaseMarkInterceptor(Consumer<Phase> marks) {
        this.marks = marks;
    }

    @Override
    public CompletableFuture<Object> intercept(ClientCall call, Chain next) {
        marks.accept(Phase.CALL_START);
        CompletableFuture<Object> outcome;
        try {
            outcome = next.proceed(call);
        } catch (RuntimeException e) {
            marks.accept(Phase.CALL_END);
            throw e;
        }
        if (outcome.isDone()) {   // a blocking call: done on the caller's thread
            marks.accept(Phase.CALL_END);
            return outcome;
        }
        return outcome.whenComplete((response, failure) -> marks.accept(Phase.CALL_END));
    }
}
