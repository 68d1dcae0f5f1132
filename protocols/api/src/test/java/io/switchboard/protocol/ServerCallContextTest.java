package io.switchboard.protocol;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.time.Duration;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;

/**
 * A call's context as protocol servers make it and operations read it: its deadline, a cancel
 * that interrupts the operation and runs the listeners once, and scopes that nest and restore.
 */
class ServerCallContextTest {
    @Test
    void theOperationSeesItsDeadlineAndNothingOutsideACall() {
        assertNull(ServerCallContext.current());
        assertNull(ServerCallContext.deadline());
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(5);
        ServerCallContext call = ServerCallContext.create(deadline, null);
        try (ServerCallContext.Scope scope = call.enter()) {
            assertSame(call, ServerCallContext.current());
            Duration left = ServerCallContext.timeLeft();
            assertNotNull(left);
            assertTrue(left.compareTo(Duration.ofSeconds(5)) <= 0 && left.compareTo(Duration.ofSeconds(4)) > 0, left.toString());
            assertNotNull(ServerCallContext.deadline());
            assertFalse(ServerCallContext.isCancelled());
        }
        assertNull(ServerCallContext.current());
    }

    @Test
    void aCancelInterruptsTheOperationRunsEachListenerOnceAndLeavesNoInterruptBehind() throws Exception {
        ServerCallContext call = ServerCallContext.create(null, null);
        AtomicInteger heard = new AtomicInteger();
        CountDownLatch inside = new CountDownLatch(1);
        CountDownLatch interrupted = new CountDownLatch(1);
        Thread operation = new Thread(() -> {
            try (ServerCallContext.Scope scope = call.enter();
                 ServerCallContext.Scope listener = ServerCallContext.onCancel(heard::incrementAndGet)) {
                inside.countDown();
                new CountDownLatch(1).await();   // the operation's wait, until its call is cancelled
            } catch (InterruptedException e) {
                interrupted.countDown();
            }
        });
        operation.start();
        assertTrue(inside.await(10, TimeUnit.SECONDS));
        call.cancel();
        call.cancel();
        assertTrue(interrupted.await(10, TimeUnit.SECONDS), "the operation's thread was interrupted");
        operation.join(10_000);
        assertEquals(1, heard.get(), "the listener ran once");
        assertTrue(call.cancelledNow());
        AtomicInteger late = new AtomicInteger();
        call.addCancelListener(late::incrementAndGet);
        assertEquals(1, late.get(), "a listener added after the cancel runs at once");
    }

    @Test
    void aCallIsCancelledWhenItsDeadlinePasses() throws Exception {
        CountDownLatch cancelled = new CountDownLatch(1);
        ServerCallContext call = ServerCallContext.create(System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(50), null);
        call.addCancelListener(cancelled::countDown);
        call.cancelAtDeadline();
        assertTrue(cancelled.await(10, TimeUnit.SECONDS), "the deadline cancelled the call");
        assertTrue(call.expired());
    }

    @Test
    void aListenerDroppedBeforeTheCancelDoesNotRunAndScopesNest() {
        ServerCallContext outer = ServerCallContext.create(null, null);
        ServerCallContext inner = ServerCallContext.create(System.nanoTime() + TimeUnit.SECONDS.toNanos(1), null);
        AtomicInteger heard = new AtomicInteger();
        try (ServerCallContext.Scope a = outer.enter()) {
            ServerCallContext.onCancel(heard::incrementAndGet).close();
            try (ServerCallContext.Scope b = inner.enter()) {
                assertSame(inner, ServerCallContext.current(), "an in-process call runs in a context of its own");
            }
            assertSame(outer, ServerCallContext.current());
            outer.cancel();
            assertTrue(ServerCallContext.isCancelled());
        }
        assertEquals(0, heard.get());
        assertFalse(Thread.interrupted(), "the call's own cancel leaves no interrupt on the thread");
    }
}
