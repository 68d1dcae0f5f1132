package io.switchboard.examples.bench;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.DirectoryStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;

/**
 * What a set of processes got from the scheduler: the CPU time all their threads ran, and the
 * time they spent runnable but waiting for a CPU, from Linux's {@code /proc/PID/task/TID/schedstat}
 * (the first two fields, in nanoseconds). Where a product waits on two CPUs shared by five JVMs
 * shows in the second figure, which no profiler of one JVM sees. The thread taking a snapshot
 * leaves itself out: reading a few hundred files costs milliseconds of its CPU. Threads that end
 * between two snapshots take their figures with them, so a difference undercounts a little;
 * elsewhere than Linux every snapshot is empty.
 *
 * <pre>{@code
 * SchedulerAccount account = SchedulerAccount.of(List.of(ProcessHandle.current().pid(), worker.pid()));
 * SchedulerAccount.Snapshot before = account.snapshot();
 * runTheProduct();
 * SchedulerAccount.Snapshot spent = account.snapshot().minus(before);   // spent.cpuNanos(), spent.waitNanos()
 * }</pre>
 */
final class SchedulerAccount {
    /** CPU time run and time waiting for a CPU, summed over threads; {@code available} false where nothing could be read. */
    record Snapshot(long cpuNanos, long waitNanos, boolean available) {
        Snapshot minus(Snapshot before) {
            return new Snapshot(cpuNanos - before.cpuNanos, waitNanos - before.waitNanos, available && before.available);
        }
    }

    private final List<Long> pids;

    private SchedulerAccount(List<Long> pids) {
        this.pids = List.copyOf(pids);
    }

    static SchedulerAccount of(List<Long> pids) {
        return new SchedulerAccount(pids);
    }

    Snapshot snapshot() {
        long cpu = 0;
        long wait = 0;
        boolean any = false;
        Path me = self();
        for (long pid : pids) {
            try (DirectoryStream<Path> tasks = Files.newDirectoryStream(Path.of("/proc", Long.toString(pid), "task"))) {
                for (Path task : tasks) {
                    if (task.equals(me)) {
                        continue;
                    }
                    long[] f = read(task.resolve("schedstat"));
                    if (f != null) {
                        cpu += f[0];
                        wait += f[1];
                        any = true;
                    }
                }
            } catch (IOException | RuntimeException e) {
                // not Linux, or the process is gone: it adds nothing
            }
        }
        return new Snapshot(cpu, wait, any);
    }

    /** This thread's directory, {@code /proc/PID/task/TID}, or null. */
    private static Path self() {
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
