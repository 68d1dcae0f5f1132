package io.switchboard.protocol;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.time.Duration;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.Callable;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.Executor;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReference;
import java.util.concurrent.locks.LockSupport;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * Work an operation hands to another thread ({@link ServerCallContext#propagating},
 * {@link ServerCallContext#wrap}): it runs in the operation's call, deadline, trace, caller and
 * cancel included; the pool's thread goes back to its pool with no call and no interrupt; and the
 * pool thread's leaving does not end the call, which its operation's thread still owns.
 */
class HandedOverWorkTest {
    /** One thread, so that the task after a handed-over one runs on the very thread it left. */
    private final ExecutorService pool = Executors.newSingleThreadExecutor();

    @AfterEach
    void stop() {
        pool.shutdownNow();
    }

    @Test
    void aTaskHandedToAPoolRunsInTheCallAndLeavesThePoolThreadAsItCame() throws Exception {
        TraceContext trace = TraceContext.of("00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01", null);
        Peer caller = Peer.anonymous("127.0.0.1");
        ServerCallContext call = ServerCallContext.create(System.nanoTime() + TimeUnit.SECONDS.toNanos(5), trace, caller);
        AtomicReference<ServerCallContext> seen = new AtomicReference<>();
        AtomicReference<Duration> left = new AtomicReference<>();
        AtomicReference<TraceContext> traced = new AtomicReference<>();
        AtomicReference<Peer> by = new AtomicReference<>();
        try (ServerCallContext.Scope operation = call.enter()) {
            CompletableFuture.runAsync(() -> {
                seen.set(ServerCallContext.current());
                left.set(ServerCallContext.timeLeft());
                traced.set(ServerCallContext.trace());
                by.set(ServerCallContext.peer());
            }, ServerCallContext.propagating(pool)).get(10, TimeUnit.SECONDS);
        }
        assertSame(call, seen.get(), "the handed-over task runs in the operation's call");
        assertNotNull(left.get());
        assertTrue(left.get().compareTo(Duration.ofSeconds(5)) <= 0 && left.get().compareTo(Duration.ofSeconds(1)) > 0,
                left.get().toString());
        assertSame(trace, traced.get());
        assertSame(caller, by.get());
        Duration wrapped = pool.submit(call.wrap((Callable<Duration>) ServerCallContext::timeLeft)).get(10, TimeUnit.SECONDS);
        assertNotNull(wrapped, "a wrapped task with a result runs in the call too");

        AtomicBoolean outsideHadCall = new AtomicBoolean(true);
        CompletableFuture.runAsync(() -> outsideHadCall.set(ServerCallContext.current() != null),
                ServerCallContext.propagating(pool)).get(10, TimeUnit.SECONDS);
        assertFalse(outsideHadCall.get(), "the pool's thread left the call; a task handed over outside of one runs as it is");
    }

    @Test
    void aCarriersStateTakenWhereTheTaskWasHandedOverIsCurrentWhereItRuns() throws Exception {
        ServerCallContext call = ServerCallContext.create(null, null);
        AtomicReference<String> onPool = new AtomicReference<>();
        AtomicReference<String> afterwards = new AtomicReference<>("unset");
        try (ServerCallContext.Scope operation = call.enter()) {
            ThreadLocalCarrier.VALUE.set("the operation's span");
            Executor inCall = ServerCallContext.propagating(pool);
            CompletableFuture.runAsync(() -> onPool.set(ThreadLocalCarrier.VALUE.get()), inCall).get(10, TimeUnit.SECONDS);
            ThreadLocalCarrier.VALUE.set("set after the hand-over");
            assertEquals("set after the hand-over", call.wrap(ThreadLocalCarrier.VALUE::get).call(),
                    "wrap takes the state when it wraps");
        } finally {
            ThreadLocalCarrier.VALUE.remove();
        }
        pool.submit(() -> afterwards.set(ThreadLocalCarrier.VALUE.get())).get(10, TimeUnit.SECONDS);
        assertEquals("the operation's span", onPool.get(), "the carrier's state went along with the task");
        assertNull(afterwards.get(), "the pool's thread got its own state back");
        assertTrue(FailingCarrier.asked >= 2, "a carrier that throws, or returns no task, was asked and left out");
    }

    @Test
    void aCancelInterruptsHandedOverWorkAndNoInterruptOutlivesIt() throws Exception {
        ServerCallContext call = ServerCallContext.create(null, null);
        CountDownLatch waiting = new CountDownLatch(1);
        AtomicBoolean interrupted = new AtomicBoolean();
        AtomicBoolean cancelledSeen = new AtomicBoolean();
        AtomicBoolean afterInterrupted = new AtomicBoolean(true);
        CountDownLatch after = new CountDownLatch(1);
        BlockingQueue<Runnable> tasks = new LinkedBlockingQueue<>();
        // a thread of its own: a ThreadPoolExecutor would clear a leftover interrupt before its next task
        Thread worker = new Thread(() -> {
            try {
                tasks.take().run();
            } catch (InterruptedException e) {
                return;
            }
            afterInterrupted.set(Thread.currentThread().isInterrupted());
            after.countDown();
        });
        worker.start();
        try (ServerCallContext.Scope operation = call.enter()) {
            ServerCallContext.propagating(tasks::add).execute(() -> {
                waiting.countDown();
                while (!Thread.currentThread().isInterrupted()) {
                    LockSupport.park(this);   // the handed-over work's wait; unlike a latch's, it keeps the interrupt
                }
                interrupted.set(true);
                cancelledSeen.set(ServerCallContext.isCancelled());
            });
            assertTrue(waiting.await(10, TimeUnit.SECONDS));
            call.cancel();   // interrupts this thread too, the operation's, until its scope closes
        }
        assertTrue(after.await(10, TimeUnit.SECONDS));
        assertTrue(interrupted.get(), "the cancel interrupted the handed-over work");
        assertTrue(cancelledSeen.get());
        assertFalse(afterInterrupted.get(), "the thread's next work does not inherit the call's interrupt");
    }

    @Test
    void aPoolThreadLeavingDoesNotEndTheCall() throws Exception {
        ServerCallContext call = ServerCallContext.create(null, null);
        AtomicInteger heard = new AtomicInteger();
        try (ServerCallContext.Scope operation = call.enter();
             ServerCallContext.Scope listener = ServerCallContext.onCancel(heard::incrementAndGet)) {
            pool.submit(call.wrap(() -> { })).get(10, TimeUnit.SECONDS);
            // the pool's thread has come and gone; the operation still runs, and its caller cancels now
            call.cancel();
            assertEquals(1, heard.get(), "the operation's listener outlived the pool thread's leaving");
            assertTrue(ServerCallContext.isCancelled());
            assertTrue(Thread.currentThread().isInterrupted(), "the operation's thread is still the call's");
        }
        assertFalse(Thread.interrupted(), "the operation's scope clears its own call's interrupt");
    }

    @Test
    void workHandedOverByACancelledCallStartsCancelled() throws Exception {
        ServerCallContext call = ServerCallContext.create(null, null);
        call.cancel();
        AtomicBoolean cancelled = new AtomicBoolean();
        AtomicBoolean interrupted = new AtomicBoolean();
        AtomicBoolean after = new AtomicBoolean(true);
        AtomicReference<ServerCallContext> current = new AtomicReference<>(call);
        // on one thread, without a pool's own clearing of interrupts between tasks
        Thread worker = new Thread(() -> {
            call.wrap(() -> {
                cancelled.set(ServerCallContext.isCancelled());
                interrupted.set(Thread.currentThread().isInterrupted());
            }).run();
            after.set(Thread.currentThread().isInterrupted());
            current.set(ServerCallContext.current());
        });
        worker.start();
        worker.join(10_000);
        assertTrue(cancelled.get());
        assertTrue(interrupted.get(), "blocking work stops at once");
        assertFalse(after.get(), "the interrupt the call's cancel made ends with the work");
        assertNull(current.get());
    }

    @Test
    void anExecutorThatRunsTheTaskOnTheOperationsOwnThreadLeavesTheCallAsItWas() {
        ServerCallContext call = ServerCallContext.create(null, null);
        try (ServerCallContext.Scope operation = call.enter()) {
            ServerCallContext.propagating(Runnable::run).execute(call::cancel);
            assertSame(call, ServerCallContext.current(), "the inner scope restored the operation's call");
            assertTrue(Thread.currentThread().isInterrupted(), "its cancel's interrupt is the operation's to clear");
        }
        assertFalse(Thread.interrupted());
        assertNull(ServerCallContext.current());
    }
}
