package io.switchboard.protocol.grpc;

import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.Test;

/**
 * A blocking call's callbacks run on the calling thread while it waits, as grpc-java's blocking
 * stub runs them: the event loop only queues them and unparks the caller.
 */
class CallerExecutorTest {
    @Test
    void aCallbackExecutedOnAnotherThreadRunsOnTheWaitingCaller() throws Exception {
        CallerExecutor caller = new CallerExecutor();
        AtomicReference<Thread> ranOn = new AtomicReference<>();
        CompletableFuture.runAsync(() -> caller.execute(() -> ranOn.set(Thread.currentThread())));
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(30);
        while (ranOn.get() == null && System.nanoTime() < deadline) {
            caller.runWaiting(TimeUnit.SECONDS.toNanos(1));
        }
        assertSame(Thread.currentThread(), ranOn.get(), "the callback ran on the caller's thread");
    }

    @Test
    void onceTheCallerIsDoneACallbackRunsWhereItIsExecuted() throws Exception {
        CallerExecutor caller = new CallerExecutor();
        AtomicReference<Thread> queuedRanOn = new AtomicReference<>();
        caller.execute(() -> queuedRanOn.set(Thread.currentThread()));
        caller.shutdown();
        assertSame(Thread.currentThread(), queuedRanOn.get(), "what was queued runs at shutdown");
        AtomicReference<Thread> lateRanOn = new AtomicReference<>();
        Thread late = new Thread(() -> caller.execute(() -> lateRanOn.set(Thread.currentThread())));
        late.start();
        late.join();
        assertSame(late, lateRanOn.get(), "a late callback (a part arriving after the caller left) still runs");
    }

    @Test
    void anInterruptedCallerStopsWaiting() {
        CallerExecutor caller = new CallerExecutor();
        Thread.currentThread().interrupt();
        try {
            assertThrows(InterruptedException.class, () -> caller.runWaiting(TimeUnit.SECONDS.toNanos(30)));
            assertTrue(!Thread.currentThread().isInterrupted(), "the interrupt was consumed by the exception");
        } finally {
            Thread.interrupted();
        }
    }
}
