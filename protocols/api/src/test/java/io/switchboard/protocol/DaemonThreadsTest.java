package io.switchboard.protocol;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ThreadFactory;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.Test;

class DaemonThreadsTest {

    @Test
    void numberedThreadsCountUpFromOneAndAreDaemons() {
        ThreadFactory factory = DaemonThreads.numbered("grpc-call");
        Thread first = factory.newThread(() -> { });
        Thread second = factory.newThread(() -> { });
        assertEquals("grpc-call-1", first.getName());
        assertEquals("grpc-call-2", second.getName());
        assertTrue(first.isDaemon());
        assertTrue(second.isDaemon());
    }

    @Test
    void eachNumberedFactoryCountsOnItsOwn() {
        DaemonThreads.numbered("pool").newThread(() -> { });
        assertEquals("pool-1", DaemonThreads.numbered("pool").newThread(() -> { }).getName());
    }

    @Test
    void namedThreadsAllBearTheNameAndRunTheirTask() throws InterruptedException {
        CountDownLatch ran = new CountDownLatch(1);
        ThreadFactory factory = DaemonThreads.named("soap-cancel");
        Thread thread = factory.newThread(ran::countDown);
        assertEquals("soap-cancel", thread.getName());
        assertEquals("soap-cancel", factory.newThread(() -> { }).getName());
        assertTrue(thread.isDaemon());
        assertFalse(thread.isAlive(), "a factory makes threads, it does not start them");
        thread.start();
        assertTrue(ran.await(30, TimeUnit.SECONDS));
    }

    @Test
    void startRunsTheTaskOnADaemonThreadOfThatName() throws InterruptedException {
        AtomicReference<Thread> runner = new AtomicReference<>();
        CountDownLatch ran = new CountDownLatch(1);
        Thread started = DaemonThreads.start(() -> {
            runner.set(Thread.currentThread());
            ran.countDown();
        }, "child-output");
        assertTrue(ran.await(30, TimeUnit.SECONDS));
        assertEquals(started, runner.get());
        assertEquals("child-output", started.getName());
        assertTrue(started.isDaemon());
    }

    @Test
    void refusesAMissingOrBlankName() {
        assertThrows(IllegalArgumentException.class, () -> DaemonThreads.numbered(null));
        assertThrows(IllegalArgumentException.class, () -> DaemonThreads.numbered(" "));
        assertThrows(IllegalArgumentException.class, () -> DaemonThreads.named(""));
        assertThrows(IllegalArgumentException.class, () -> DaemonThreads.start(() -> { }, null));
        assertThrows(NullPointerException.class, () -> DaemonThreads.start(null, "reader"));
    }
}
