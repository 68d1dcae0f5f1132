package io.switchboard.examples.bench;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import java.lang.management.ManagementFactory;
import java.lang.management.ThreadMXBean;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class SchedulerAccountTest {
    @TempDir
    Path dir;

    @Test
    void aSchedstatLineGivesTheCpuTimeAndTheWaitForACpu() throws Exception {
        Path line = dir.resolve("schedstat");
        Files.writeString(line, "319843351 77311204 969\n");
        assertArrayEquals(new long[] {319_843_351L, 77_311_204L}, SchedulerAccount.read(line));
        assertNull(SchedulerAccount.read(dir.resolve("gone")), "a thread that ended meanwhile adds nothing");
    }

    @Test
    void theCpuTimeAThreadOfTheseProcessesRunsIsCounted() {
        assumeTrue(Files.isDirectory(Path.of("/proc/self/task")), "the kernel's scheduler figures are Linux's");
        SchedulerAccount account = SchedulerAccount.of(List.of(ProcessHandle.current().pid()));
        ThreadMXBean threads = ManagementFactory.getThreadMXBean();
        SchedulerAccount.Snapshot before = account.snapshot();
        long start = threads.getCurrentThreadCpuTime();
        long spin = 0;
        while (threads.getCurrentThreadCpuTime() - start < 50_000_000L) {
            spin++;
        }
        SchedulerAccount.Snapshot spent = account.snapshot().minus(before);
        assertTrue(spent.available());
        assertTrue(spent.cpuNanos() >= 45_000_000L, "50 ms spun on this thread, counted " + spent.cpuNanos() + " ns (" + spin + ")");
        assertTrue(spent.waitNanos() >= 0);
        assertFalse(SchedulerAccount.of(List.of(Long.MAX_VALUE)).snapshot().available(), "no such process: nothing read");
        SchedulerAccount.Snapshot floor = account.floor();
        assertTrue(floor.available() && floor.cpuNanos() >= 0 && floor.cpuNanos() < 45_000_000L,
                "reading the figures costs something, far less than the spin: " + floor);
    }
}
