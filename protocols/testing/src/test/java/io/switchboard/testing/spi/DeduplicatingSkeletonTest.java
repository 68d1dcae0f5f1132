package io.switchboard.testing.spi;

import io.switchboard.protocol.spi.DeduplicatingSkeleton;

import io.switchboard.protocol.Skeleton;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.switchboard.idl.runtime.OperationDescriptor;
import io.switchboard.idl.runtime.ServiceDescriptor;
import io.switchboard.testing.ManualClock;
import io.switchboard.testing.conformance.ConformanceComponent;
import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;

class DeduplicatingSkeletonTest {
    private static final OperationDescriptor OP = ConformanceComponent.DESCRIPTOR.operation("increment");

    /** A skeleton that counts runs and can be held inside a run. */
    private static final class Counting implements Skeleton {
        final AtomicInteger runs = new AtomicInteger();
        final CountDownLatch entered = new CountDownLatch(1);
        final CountDownLatch release = new CountDownLatch(1);

        @Override
        public ServiceDescriptor descriptor() {
            return ConformanceComponent.DESCRIPTOR;
        }

        @Override
        public Object invoke(OperationDescriptor operation, Object request) {
            runs.incrementAndGet();
            entered.countDown();
            try {
                release.await(10, TimeUnit.SECONDS);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
            return new Object();
        }
    }

    @Test
    void aRepeatWhileTheFirstRunsWaitsForItsResult() throws Exception {
        Counting inner = new Counting();
        DeduplicatingSkeleton once = new DeduplicatingSkeleton(inner, 1 << 20, Duration.ofMinutes(1));
        ExecutorService pool = Executors.newFixedThreadPool(2);
        try {
            Future<Object> first = pool.submit(() -> once.invoke(OP, null, "id-1"));
            assertTrue(inner.entered.await(10, TimeUnit.SECONDS), "the first call runs");
            CompletableFuture<Object> repeat = new CompletableFuture<>();
            Thread repeating = new Thread(() -> {
                try {
                    repeat.complete(once.invoke(OP, null, "id-1"));
                } catch (Throwable t) {
                    repeat.completeExceptionally(t);
                }
            });
            repeating.start();
            // The repeat parks on the first call's outcome (WAITING, untimed); the component's own
            // wait is timed, so a repeat that ran the component again never shows this state.
            long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
            while (repeating.getState() != Thread.State.WAITING && !repeat.isDone()) {
                assertTrue(System.nanoTime() < deadline, "the repeat reaches the wait: " + repeating.getState());
                Thread.onSpinWait();
            }
            assertFalse(repeat.isDone(), "the repeat waits for the first call instead of answering at once");
            inner.release.countDown();
            assertSame(first.get(10, TimeUnit.SECONDS), repeat.get(10, TimeUnit.SECONDS));
            assertEquals(1, inner.runs.get());
        } finally {
            pool.shutdownNow();
        }
    }

    @Test
    void withoutAnIdEveryCallRuns() throws Exception {
        Counting inner = new Counting();
        inner.release.countDown();
        DeduplicatingSkeleton once = new DeduplicatingSkeleton(inner, 1 << 20, Duration.ofMinutes(1));
        once.invoke(OP, null, null);
        once.invoke(OP, null, null);
        assertEquals(2, inner.runs.get());
    }

    @Test
    void idempotentOperationsAreNotRememberedTheyMayRunAgain() throws Exception {
        Counting inner = new Counting();
        inner.release.countDown();
        DeduplicatingSkeleton once = new DeduplicatingSkeleton(inner, 1 << 20, Duration.ofMinutes(1));
        OperationDescriptor echo = ConformanceComponent.DESCRIPTOR.operation("echoDoubles");
        once.invoke(echo, null, "same");
        once.invoke(echo, null, "same");
        assertEquals(2, inner.runs.get());
        assertEquals(0, once.remembered(), "nothing held for an idempotent operation");
    }

    @Test
    void expiredCallsAreDroppedAsNewOnesArrive() throws Exception {
        Counting inner = new Counting();
        inner.release.countDown();
        ManualClock clock = new ManualClock();
        DeduplicatingSkeleton once = new DeduplicatingSkeleton(inner, 1 << 20, Duration.ofMillis(50), clock);
        once.invoke(OP, null, "a");
        once.invoke(OP, null, "b");
        clock.advance(Duration.ofMillis(50));
        assertTrue(once.remembers(OP, "a"), "kept for exactly its retention");
        clock.advance(Duration.ofNanos(1));
        once.invoke(OP, null, "c");
        assertEquals(1, once.remembered(), "a and b expired and were dropped");
        once.invoke(OP, null, "a");
        assertEquals(4, inner.runs.get(), "'a' ran again after its retention");
    }

    @Test
    void forgetsTheOldestBeyondItsBytes() throws Exception {
        Counting inner = new Counting();
        inner.release.countDown();
        DeduplicatingSkeleton probe = new DeduplicatingSkeleton(inner, 1 << 20, Duration.ofMinutes(1));
        probe.invoke(OP, null, "a");
        long oneCall = probe.interceptor().rememberedBytes();   // calls of ids of one length cost the same
        DeduplicatingSkeleton once = new DeduplicatingSkeleton(inner, 2 * oneCall, Duration.ofMinutes(1));
        inner.runs.set(0);
        once.invoke(OP, null, "a");
        once.invoke(OP, null, "b");
        once.invoke(OP, null, "c");
        assertEquals(2, once.remembered());
        assertTrue(once.interceptor().rememberedBytes() <= 2 * oneCall);
        once.invoke(OP, null, "a");
        assertEquals(4, inner.runs.get(), "'a' was forgotten and ran again");
        once.invoke(OP, null, "c");
        assertEquals(4, inner.runs.get(), "'c' is still remembered");
    }
}
