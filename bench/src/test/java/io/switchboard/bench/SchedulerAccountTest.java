package io.switchboard.bench;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import java.lang.management.ManagementFactory;
import java.lang.management.ThreadMXBean;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
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

    /**
     * A thread that ends between two snapshots is left out, not subtracted: summed per process, a
     * pool thread of 500 ms that ended during a product made the product's CPU negative.
     */
    @Test
    void aDifferenceIsTakenThreadByThread() {
        Path a = Path.of("/proc/1/task/1");
        Path ended = Path.of("/proc/1/task/2");
        Path started = Path.of("/proc/1/task/3");
        SchedulerAccount.Snapshot before = new SchedulerAccount.Snapshot(Map.of(a, new long[] {100, 10}, ended,
                new long[] {500, 50}));
        SchedulerAccount.Snapshot after = new SchedulerAccount.Snapshot(Map.of(a, new long[] {150, 12}, started,
                new long[] {30, 3}));
        SchedulerAccount.Spent spent = after.minus(before);
        assertEquals(50 + 30, spent.cpuNanos(), "the thread that ran on, and the one started since from zero");
        assertEquals(2 + 3, spent.waitNanos());
        assertTrue(spent.available());
        assertFalse(after.minus(new SchedulerAccount.Snapshot(Map.of())).available(), "nothing read before");
    }

    @Test
    void theCpuTimeOfAnotherThreadIsCounted() throws Exception {
        assumeTrue(Files.isDirectory(Path.of("/proc/self/task")), "the kernel's scheduler figures are Linux's");
        SchedulerAccount account = SchedulerAccount.of(List.of(ProcessHandle.current().pid()));
        CountDownLatch spun = new CountDownLatch(1);
        CountDownLatch counted = new CountDownLatch(1);
        Path[] spinnersOwn = new Path[1];
        Thread spinner = new Thread(() -> {
            spinnersOwn[0] = SchedulerAccount.self();
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
        SchedulerAccount.Spent spent = account.snapshot().minus(before);
        counted.countDown();
        spinner.join();
        assertTrue(spent.available());
        assertTrue(spent.cpuNanos() >= 45_000_000L, "50 ms spun on another thread, counted " + spent.cpuNanos() + " ns");
        assertTrue(spent.waitNanos() >= 0);
        assertTrue(SchedulerAccount.of(List.of(Long.MAX_VALUE)).snapshot().threads().isEmpty(), "no such process: nothing read");

        // the thread taking a snapshot leaves out its own directory, and only its own
        Path mine = SchedulerAccount.self();
        assertEquals(Path.of("/proc", Long.toString(ProcessHandle.current().pid()), "task"), mine.getParent());
        assertTrue(Files.isRegularFile(mine.resolve("schedstat")), mine.toString());
        assertNotEquals(mine, spinnersOwn[0]);
        assertEquals(mine.getParent(), spinnersOwn[0].getParent());
    }

    @Test
    void theCompilerThreadsAreThoseOfTheJit() {
        assumeTrue(Files.isDirectory(Path.of("/proc/self/task")), "the kernel's scheduler figures are Linux's");
        SchedulerAccount account = SchedulerAccount.of(List.of(ProcessHandle.current().pid()));
        Map<Path, long[]> compilers = account.compilers().threads();
        assertFalse(compilers.isEmpty(), "a JVM with a JIT has compiler threads");
        assertTrue(compilers.size() < account.snapshot().threads().size(), "and other threads besides");
        for (Path t : compilers.keySet()) {
            assertTrue(t.getFileName().toString().matches("\\d+"), t.toString());
        }
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
