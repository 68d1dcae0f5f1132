package io.switchboard.protocol;

import java.util.Objects;
import java.util.concurrent.ThreadFactory;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * The framework's own threads: every one a daemon, so a server, client or watch left open never
 * keeps a JVM alive, and every one named, so a thread dump says whose it is.
 *
 * <pre>{@code
 * ExecutorService pool = Executors.newFixedThreadPool(4, DaemonThreads.numbered("matrix-manager"));
 * // threads matrix-manager-1, matrix-manager-2, ...
 * ScheduledExecutorService timer = Executors.newSingleThreadScheduledExecutor(DaemonThreads.named("lease-sweeper"));
 * Thread reader = DaemonThreads.start(this::readOutput, "child-output");
 * }</pre>
 */
public final class DaemonThreads {
    private DaemonThreads() {
    }

    /** Daemon threads named {@code <prefix>-1}, {@code <prefix>-2}, ... in the order they are made. */
    public static ThreadFactory numbered(String prefix) {
        String checked = checkName(prefix);
        AtomicInteger made = new AtomicInteger();
        return task -> daemon(task, checked + "-" + made.incrementAndGet());
    }

    /** Daemon threads that all bear {@code name}: a single-thread executor's, or a pool whose threads need no number. */
    public static ThreadFactory named(String name) {
        String checked = checkName(name);
        return task -> daemon(task, checked);
    }

    /** Starts {@code task} on a daemon thread of its own named {@code name}, and returns that thread. */
    public static Thread start(Runnable task, String name) {
        Thread thread = daemon(Objects.requireNonNull(task, "task"), checkName(name));
        thread.start();
        return thread;
    }

    private static Thread daemon(Runnable task, String name) {
        Thread thread = new Thread(task, name);
        thread.setDaemon(true);
        return thread;
    }

    private static String checkName(String name) {
        if (name == null || name.isBlank()) {
            throw new IllegalArgumentException("a thread name is required, got " + (name == null ? "null" : "'" + name + "'"));
        }
        return name;
    }
}
