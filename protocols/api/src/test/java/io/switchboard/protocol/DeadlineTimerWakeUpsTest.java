package io.switchboard.protocol;

import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.nio.file.DirectoryStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.condition.EnabledOnOs;
import org.junit.jupiter.api.condition.OS;

/**
 * The deadline timer's thread stays asleep while calls with deadlines of seconds come and go: a
 * wake-up per call would cost each call a context switch on the server's CPU. Read from Linux's
 * per-thread context switch counts.
 */
@EnabledOnOs(OS.LINUX)
class DeadlineTimerWakeUpsTest {
    private static final int CALLS = 5000;

    @Test
    void callsWithLongDeadlinesDoNotWakeTheTimerThreadAndAShortOneStillFires() throws Exception {
        oneCall(30_000);   // the timer and its thread exist from here on
        Path timer = timerThread();
        assertNotNull(timer, "the deadline timer's thread is found in /proc/self/task");
        long before = switches(timer);
        long start = System.nanoTime();
        for (int i = 0; i < CALLS; i++) {
            oneCall(30_000);
        }
        long seconds = TimeUnit.NANOSECONDS.toSeconds(System.nanoTime() - start);
        long woken = switches(timer) - before;
        // one tick a second at most, and a margin; a wake-up per call would be thousands
        assertTrue(woken <= 2 * seconds + 20, "the timer's thread switched " + woken + " times for " + CALLS
                + " calls in " + seconds + " s");

        ServerCallContext shortCall = ServerCallContext.create(System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(50), null);
        CountDownLatch cancelled = new CountDownLatch(1);
        try (ServerCallContext.Scope scope = shortCall.cancelAtDeadline().enter(false);
             ServerCallContext.Scope listener = ServerCallContext.onCancel(cancelled::countDown)) {
            assertTrue(cancelled.await(10, TimeUnit.SECONDS), "a deadline shorter than the tick still cancels its call");
        }
    }

    /** A call with a deadline {@code millis} away that ends at once, as a fast operation's does. */
    private static void oneCall(long millis) {
        ServerCallContext call = ServerCallContext.create(System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(millis), null)
                .cancelAtDeadline();
        try (ServerCallContext.Scope scope = call.enter()) {
            assertTrue(ServerCallContext.timeLeft() != null);
        }
    }

    private static Path timerThread() throws IOException {
        try (DirectoryStream<Path> tasks = Files.newDirectoryStream(Path.of("/proc/self/task"))) {
            for (Path t : tasks) {
                // the kernel keeps 15 characters of a thread's name
                if (Files.readString(t.resolve("comm")).trim().equals("switchboard-deadlines".substring(0, 15))) {
                    return t;
                }
            }
        }
        return null;
    }

    private static long switches(Path thread) throws IOException {
        long n = 0;
        for (String line : Files.readAllLines(thread.resolve("status"))) {
            if (line.startsWith("voluntary_ctxt_switches") || line.startsWith("nonvoluntary_ctxt_switches")) {
                n += Long.parseLong(line.substring(line.indexOf(':') + 1).trim());
            }
        }
        return n;
    }
}
