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
import java.util.concurrent.CountDownLatch;
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
    void theCpuTimeOfTheseProcessesThreadsIsCountedButNotTheMeasuringThreads() throws Exception {
        assumeTrue(Files.isDirectory(Path.of("/proc/self/task")), "the kernel's scheduler figures are Linux's");
        SchedulerAccount account = SchedulerAccount.of(List.of(ProcessHandle.current().pid()));
        CountDownLatch spun = new CountDownLatch(1);
        CountDownLatch counted = new CountDownLatch(1);
        Thread spinner = new Thread(() -> {
            spin(50_000_000L);
            spun.countDown();
            try {
                counted.await();   // alive until counted: a thread that ends takes its figures along
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
        });
        SchedulerAccount.Snapshot before = account.snapshot();
        spinner.start();
        spun.await();
        SchedulerAccount.Snapshot spent = account.snapshot().minus(before);
        counted.countDown();
        spinner.join();
        assertTrue(spent.available());
        assertTrue(spent.cpuNanos() >= 45_000_000L, "50 ms spun on another thread, counted " + spent.cpuNanos() + " ns");
        assertTrue(spent.waitNanos() >= 0);

        SchedulerAccount.Snapshot mineBefore = account.snapshot();
        spin(100_000_000L);
        long mine = account.snapshot().minus(mineBefore).cpuNanos();
        assertTrue(mine < 50_000_000L, "100 ms spun on the measuring thread, counted " + mine + " ns");
        assertFalse(SchedulerAccount.of(List.of(Long.MAX_VALUE)).snapshot().available(), "no such process: nothing read");
    }

    /** Runs this thread's CPU for {@code nanos}. */
    private static long spin(long nanos) {
        ThreadMXBean threads = ManagementFactory.getThreadMXBean();
        long start = threads.getCurrentThreadCpuTime();
        long n = 0;
        while (threads.getCurrentThreadCpuTime() - start < nanos) {
            n++;
        }
        return n;
    }
}
