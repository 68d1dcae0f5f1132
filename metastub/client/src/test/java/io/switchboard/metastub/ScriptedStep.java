package io.switchboard.metastub;

import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Deque;
import java.util.List;
import java.util.concurrent.CompletableFuture;

/**
 * A fake next step for interceptor tests: answers each attempt with the next scripted outcome (a
 * response, a Throwable to fail with, or a future to hand back as it is) and notes what each
 * attempt looked like when it arrived.
 */
public final class ScriptedStep implements ClientInterceptor.Chain {
    /** What an attempt looked like on arrival. */
    public record Seen(String protocol, String reason, int attempt, boolean fallback, String callId,
                       io.switchboard.protocol.CallOptions options) {
    }

    private final Deque<Object> outcomes = new ArrayDeque<>();
    public final List<Seen> seen = new ArrayList<>();

    public ScriptedStep(Object... outcomes) {
        for (Object o : outcomes) {
            this.outcomes.add(o);
        }
    }

    @Override
    @SuppressWarnings("unchecked")
    public synchronized CompletableFuture<Object> proceed(ClientCall call) {
        seen.add(new Seen(call.protocol(), call.reason(), call.attempt(), call.fallback(), call.options().callId(),
                call.options()));
        Object next = outcomes.isEmpty() ? "ok" : outcomes.poll();
        if (next instanceof CompletableFuture<?> f) {
            return (CompletableFuture<Object>) f;
        }
        if (next instanceof Throwable t) {
            return CompletableFuture.failedFuture(t);
        }
        return CompletableFuture.completedFuture(next);
    }
}
