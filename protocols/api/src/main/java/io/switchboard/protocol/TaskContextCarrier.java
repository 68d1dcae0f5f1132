package io.switchboard.protocol;

import java.util.ServiceLoader;
import java.util.concurrent.Callable;

/**
 * Thread-bound state other than the call (a tracing library's current span, say) that work an
 * operation hands to another thread takes along through {@link ServerCallContext#wrap(Runnable)}
 * and {@link ServerCallContext#propagating}. Each carrier is asked where the task is handed over
 * and wraps it so that the state current there is current where it runs. Found with
 * {@link ServiceLoader} ({@code META-INF/services/io.switchboard.protocol.TaskContextCarrier});
 * the meta-stub's module brings one for OpenTelemetry's context, so that a call made on a pool's
 * thread is traced as a child of the operation's span.
 *
 * <pre>{@code
 * public final class MdcCarrier implements TaskContextCarrier {
 *     public Runnable carry(Runnable task) {
 *         Map<String, String> mdc = MDC.getCopyOfContextMap();
 *         return () -> { MDC.setContextMap(mdc); try { task.run(); } finally { MDC.clear(); } };
 *     }
 *     public <T> Callable<T> carry(Callable<T> task) { ... }
 * }
 * }</pre>
 */
public interface TaskContextCarrier {
    /** {@code task}, to run with the state current on the calling thread now. */
    Runnable carry(Runnable task);

    /** As {@link #carry(Runnable)}, for a task with a result. */
    <T> Callable<T> carry(Callable<T> task);
}
