package io.switchboard.client.load;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.switchboard.idl.runtime.DeclaredFault;
import io.switchboard.protocol.TransportException;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.Test;

/** The load engine on calls that need no server: what it counts, when it stops, what it refuses. */
class LoadRunTest {
    private static final Duration END = Duration.ofMinutes(1);

    @Test
    void everyCallIsCountedAndEachKindOfFailureIsToldOnce() throws Exception {
        AtomicLong made = new AtomicLong();
        List<String> told = new CopyOnWriteArrayList<>();
        LoadTally tally = new LoadTally((kind, e) -> told.add(kind));
        LoadRun run = LoadRun.builder(() -> () -> {
            long n = made.incrementAndGet();
            if (n % 3 == 0) {
                throw new IllegalStateException("every third");
            }
            if (n % 5 == 0) {
                throw new TransportException("grpc", TransportException.Delivery.NOT_DELIVERED, "refused", null);
            }
        }).concurrency(4).duration(Duration.ofMillis(300)).tally(tally).start();

        assertTrue(run.await(END), "a run with a duration ends by itself");
        assertEquals(made.get(), tally.calls(), "every call made is counted");
        Map<String, Long> failures = tally.failures();
        long third = failures.getOrDefault("IllegalStateException", 0L);
        long fifth = failures.getOrDefault("TransportException (not delivered)", 0L);
        assertEquals(tally.failed(), third + fifth, failures.toString());
        assertTrue(made.get() < 15 || (third > 0 && fifth > 0), failures + " of " + made.get());
        assertEquals(failures.keySet().stream().sorted().toList(), told.stream().sorted().toList(),
                "the first failure of each kind is told, once");
        assertTrue(tally.latency().maxMillis() >= tally.latency().percentileMillis(50));
    }

    @Test
    void stoppingStartsNoNewCallAndLetsTheOnesUnderWayFinish() throws Exception {
        CountDownLatch underWay = new CountDownLatch(2);
        CountDownLatch release = new CountDownLatch(1);
        AtomicLong started = new AtomicLong();
        LoadRun run = LoadRun.builder(() -> () -> {
            started.incrementAndGet();
            underWay.countDown();
            release.await();
        }).concurrency(2).start();   // no duration: until stopped

        assertTrue(underWay.await(1, TimeUnit.MINUTES));
        run.stop();
        assertTrue(!run.await(Duration.ofMillis(50)), "the calls under way are still running");
        release.countDown();
        assertTrue(run.await(END));
        assertEquals(2, started.get(), "no call started after the stop");
        assertEquals(2, run.tally().calls());
        assertEquals(0, run.tally().failed());
    }

    @Test
    void aRateBoundsTheCallsStarted() throws Exception {
        LoadRun run = LoadRun.builder(() -> () -> { }).concurrency(4).rate(20).duration(Duration.ofMillis(500))
                .start();
        assertTrue(run.await(END));
        // starts are spread 50 ms apart from the start: at most 10 fall within 500 ms
        assertTrue(run.tally().calls() >= 1 && run.tally().calls() <= 10, run.tally().calls() + " calls");
    }

    @Test
    void declaredFaultsAndTransportFailuresAreKindsOfTheirOwn() {
        assertEquals("declared-fault", LoadTally.kind(new DeclaredFault("no") {
            @Override
            public Object faultInfo() {
                return null;
            }
        }));
        assertEquals("TransportException (may have run)", LoadTally.kind(
                new TransportException("soap", TransportException.Delivery.MAY_HAVE_RUN, "cut", null)));
        assertEquals("IllegalArgumentException", LoadTally.kind(new IllegalArgumentException()));
    }

    @Test
    void nonsenseSettingsAreRefused() {
        LoadRun.Builder b = LoadRun.builder(() -> () -> { });
        assertThrows(IllegalArgumentException.class, () -> b.concurrency(0));
        assertThrows(IllegalArgumentException.class, () -> b.duration(Duration.ofSeconds(-1)));
        assertThrows(IllegalArgumentException.class, () -> b.rate(0));
        assertThrows(IllegalArgumentException.class, () -> b.rate(Double.NaN));
        assertThrows(IllegalArgumentException.class, () -> b.rate(Double.POSITIVE_INFINITY));
        assertThrows(NullPointerException.class, () -> b.tally(null));
    }

    @Test
    void percentilesAreWithinABucketOfTheTruth() {
        LatencyHistogram h = new LatencyHistogram();
        assertEquals(0, h.percentileMillis(50));
        for (int micros = 1; micros <= 1000; micros++) {
            h.record(micros * 1000L);
        }
        assertEquals(0.5, h.percentileMillis(50), 0.5 * 0.02);
        assertEquals(0.99, h.percentileMillis(99), 0.99 * 0.02);
        assertEquals(1.0, h.maxMillis(), 1e-9);
    }
}
