package io.switchboard.bench;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.DirectoryStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

/**
 * What a set of processes got from the scheduler: the CPU time all their threads ran, and the
 * time they spent runnable but waiting for a CPU, from Linux's {@code /proc/PID/task/TID/schedstat}
 * (the first two fields, in nanoseconds). Where a product waits on two CPUs shared by five JVMs
 * shows in the second figure, which no profiler of one JVM sees. The thread taking a snapshot
 * leaves itself out: reading a few hundred files costs milliseconds of its CPU. A difference is
 * taken thread by thread; threads that end between two snapshots take their last figures with
 * them, so it undercounts a little. Elsewhere than Linux every snapshot is empty.
 *
 * <pre>{@code
 * SchedulerAccount account = SchedulerAccount.of(List.of(ProcessHandle.current().pid(), worker.pid()));
 * SchedulerAccount.Snapshot before = account.snapshot();
 * runTheProduct();
 * SchedulerAccount.Spent spent = account.snapshot().minus(before);   // spent.cpuNanos(), spent.waitNanos()
 * }</pre>
 */
final class SchedulerAccount {
    /** Each thread's CPU time and wait for a CPU so far, by its {@code /proc/PID/task/TID} directory. */
    record Snapshot(Map<Path, long[]> threads) {
        /**
         * What the threads got since {@code before}, thread by thread: a thread started since
         * counts from zero, one that ended is left out (its last figures went with it; counting
         * its total out of the sum would take off what it ran before).
         */
        Spent minus(Snapshot before) {
            long cpu = 0;
            long wait = 0;
            for (Map.Entry<Path, long[]> t : threads.entrySet()) {
                long[] was = before.threads.getOrDefault(t.getKey(), NEW_THREAD);
                cpu += t.getValue()[0] - was[0];
                wait += t.getValue()[1] - was[1];
            }
            return new Spent(cpu, wait, !threads.isEmpty() && !before.threads.isEmpty());
        }
    }

    /** CPU time run and time waiting for a CPU, summed over threads; {@code available} false where nothing could be read. */
    record Spent(long cpuNanos, long waitNanos, boolean available) {
    }

    private static final long[] NEW_THREAD = {0, 0};

    private final List<Long> pids;

    private SchedulerAccount(List<Long> pids) {
        this.pids = List.copyOf(pids);
    }

    static SchedulerAccount of(List<Long> pids) {
        return new SchedulerAccount(pids);
    }

    Snapshot snapshot() {
        return snapshot(false);
    }

    /**
     * The JIT compiler threads only (HotSpot's {@code C1 CompilerThreadN} and {@code C2
     * CompilerThreadN}): the CPU they ran between two of these is the compiling done meanwhile,
     * in every JVM of the account, where a JVM's own {@code CompilationMXBean} answers for itself only.
     */
    Snapshot compilers() {
        return snapshot(true);
    }

    /**
     * A count of the compilers' CPU from now: what {@link Sweep#untilQuiet} reads, in nanoseconds,
     * at the end of each slice.
     */
    java.util.function.LongSupplier compilingFromNow() {
        Snapshot before = compilers();
        return () -> compilers().minus(before).cpuNanos();
    }

    private Snapshot snapshot(boolean compilersOnly) {
        Map<Path, long[]> threads = new HashMap<>();
        Path me = self();
        for (long pid : pids) {
            try (DirectoryStream<Path> tasks = Files.newDirectoryStream(Path.of("/proc", Long.toString(pid), "task"))) {
                for (Path task : tasks) {
                    if (task.equals(me) || (compilersOnly && !compiler(task))) {
                        continue;
                    }
                    long[] f = read(task.resolve("schedstat"));
                    if (f != null) {
                        threads.put(task, f);
                    }
                }
            } catch (IOException | RuntimeException e) {
                // not Linux, or the process is gone: it adds nothing
            }
        }
        return new Snapshot(threads);
    }

    /** Whether the thread is a JIT compiler's: its name (truncated to 15 characters by the kernel) says so. */
    private static boolean compiler(Path task) {
        try {
            String name = Files.readString(task.resolve("comm"), StandardCharsets.US_ASCII);
            return name.startsWith("C1 CompilerThre") || name.startsWith("C2 CompilerThre");
        } catch (IOException | RuntimeException e) {
            return false;
        }
    }

    /** This thread's directory, {@code /proc/PID/task/TID}, or null. */
    static Path self() {
        try {
            return Path.of("/proc").resolve(Files.readSymbolicLink(Path.of("/proc/thread-self")));
        } catch (IOException | RuntimeException e) {
            return null;
        }
    }

    /** The first two fields of a schedstat line, or null when the thread ended meanwhile. */
    static long[] read(Path schedstat) {
        try {
            String[] f = Files.readString(schedstat, StandardCharsets.US_ASCII).trim().split(" ");
            return new long[] {Long.parseLong(f[0]), Long.parseLong(f[1])};
        } catch (IOException | RuntimeException e) {
            return null;
        }
    }
}
