package io.switchboard.metastub;

import io.opentelemetry.context.Context;
import io.switchboard.protocol.TaskContextCarrier;
import java.util.concurrent.Callable;

/**
 * Takes OpenTelemetry's current context, and so the current span, along with work an operation
 * hands to another thread through {@code ServerCallContext.propagating} or {@code wrap}, as
 * OpenTelemetry's {@code Context.taskWrapping} does: a call made on a pool's thread is traced as a
 * child of the span current where it was handed over. Found through {@link java.util.ServiceLoader};
 * applications do not call it.
 */
public final class OpenTelemetryTaskCarrier implements TaskContextCarrier {
    @Override
    public Runnable carry(Runnable task) {
        Context current = Context.current();
        return current == Context.root() ? task : current.wrap(task);
    }

    @Override
    public <T> Callable<T> carry(Callable<T> task) {
        Context current = Context.current();
        return current == Context.root() ? task : current.wrap(task);
    }
}
