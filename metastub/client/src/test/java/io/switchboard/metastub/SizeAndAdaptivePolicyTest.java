package io.switchboard.metastub;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.switchboard.idl.runtime.OperationDescriptor;
import io.switchboard.protocol.Endpoint;
import io.switchboard.testing.conformance.ConformanceComponent;
import io.switchboard.testing.conformance.EchoDoubles;
import io.switchboard.testing.conformance.EchoList;
import io.switchboard.testing.conformance.EchoMixed;
import io.switchboard.testing.conformance.Mixed;
import io.switchboard.testing.conformance.Tensor;
import io.switchboard.testing.conformance.Values;
import java.time.Duration;
import java.util.List;
import java.util.Random;
import org.junit.jupiter.api.Test;

/** The size and adaptive policies decide from the call's shape, and adaptive learns from what it sees. */
class SizeAndAdaptivePolicyTest {
    private static final OperationDescriptor DOUBLES = ConformanceComponent.DESCRIPTOR.operation("echoDoubles");
    private static final OperationDescriptor LIST = ConformanceComponent.DESCRIPTOR.operation("echoList");
    private static final ProtocolSuite SUITE = ProtocolSuite.of(List.of("fast", "soap"),
            List.of(new Endpoint("fast", "fast://h:1/C"), new Endpoint("soap", "http://h:2/axis2/services/C")));
    private static final List<String> BOTH = SUITE.candidates();
    private final MessageSize sizes = new MessageSize(ConformanceComponent.DESCRIPTOR.model());

    private CallContext doubles(int n) {
        EchoDoubles m = new EchoDoubles();
        m.setValues(new double[n]);
        return new CallContext(DOUBLES, m, SUITE, sizes);
    }

    private CallContext list(int n) {
        EchoList m = new EchoList();
        m.setHead(Values.list(n));
        return new CallContext(LIST, m, SUITE, sizes);
    }

    @Test
    void sizePolicySendsSmallOverSoapAndLargeOverTheBulkProtocol() {
        SizePolicy size = new SizePolicy();
        assertEquals("soap", size.select(doubles(10), BOTH));
        assertEquals("soap", size.select(doubles(99), BOTH));
        assertEquals("fast", size.select(doubles(101), BOTH));
        assertEquals("soap", size.select(list(5), BOTH));
        assertEquals("fast", size.select(list(50), BOTH));
        assertEquals("soap", size.select(doubles(1_000_000), List.of("soap")), "SOAP when it is the only candidate");
    }

    @Test
    void sizePolicySendsEveryCallTcpIsOfferedForOverTcp() {
        SizePolicy size = new SizePolicy();
        // tcp is a candidate only for calls within its bound (the selection step leaves it out of larger ones)
        assertEquals("tcp", size.select(doubles(10), List.of("fast", "tcp", "soap")));
        assertEquals("tcp", size.select(doubles(5_000), List.of("fast", "tcp", "soap")), "over SOAP's threshold too");
        assertEquals("fast", size.select(doubles(5_000), List.of("fast", "soap")), "without tcp: as before");
    }

    @Test
    void theSizeWalkStopsAtItsCap() {
        CallContext huge = list(1_000_000);
        long estimate = huge.estimatedBytes(800);
        assertTrue(estimate > 800 && estimate < 800 + 200, "stopped just past the cap: " + estimate);
        assertEquals(8_000_000 + 2, doubles(1_000_000).estimatedBytes(Long.MAX_VALUE), "arrays are counted, not walked");
    }

    @Test
    void sharedAndCyclicNodesAreCountedOnce() {
        EchoList m = new EchoList();
        m.setHead(Values.list(10));
        long straight = sizes.estimate(m, LIST.model().request(), Long.MAX_VALUE);
        var tail = m.getHead();
        while (tail.getNextLink() != null) {
            tail = tail.getNextLink();
        }
        tail.setNextLink(m.getHead());
        long cyclic = sizes.estimate(m, LIST.model().request(), Long.MAX_VALUE);
        assertTrue(cyclic >= straight + 2 && cyclic <= 3 * straight, "the walk ends within three laps of the cycle: "
                + cyclic + " for " + straight);
        tail.setNextLink(m.getHead().getNextLink().getNextLink());   // a tail back into the middle
        long rho = sizes.estimate(m, LIST.model().request(), Long.MAX_VALUE);
        assertTrue(rho >= straight + 2 && rho <= 3 * straight, rho + " for " + straight);

        Mixed shared = Mixed.of(1.0, "abc", 2.0);
        EchoMixed twice = new EchoMixed();
        twice.setList(Mixed.of(shared, shared));
        EchoMixed once = new EchoMixed();
        once.setList(Mixed.of(shared));
        var mixed = ConformanceComponent.DESCRIPTOR.model().operation("echoMixed").request();
        assertEquals(sizes.estimate(once, mixed, Long.MAX_VALUE), sizes.estimate(twice, mixed, Long.MAX_VALUE),
                "a list held twice where the walk branches is counted once");
    }

    /**
     * Along a single path (a list) the walk remembers one node, not every node: counting a
     * 10^5-node list up to 2 MiB allocated the identity table of 46,000 nodes (and took 2.3 ms,
     * four fifths of it in that table).
     */
    @Test
    void aLongListIsCountedWithoutRememberingEveryNode() {
        EchoList m = new EchoList();
        m.setHead(Values.list(100_000));
        var allocation = (com.sun.management.ThreadMXBean) java.lang.management.ManagementFactory.getThreadMXBean();
        long cap = 2L << 20;
        sizes.estimate(m, LIST.model().request(), cap);   // the field plans are made once
        long before = allocation.getCurrentThreadAllocatedBytes();
        long estimate = sizes.estimate(m, LIST.model().request(), cap);
        long allocated = allocation.getCurrentThreadAllocatedBytes() - before;
        assertTrue(estimate > cap, "counted past the cap: " + estimate);
        assertTrue(allocated < 16 << 10, "allocated " + allocated + " bytes to count it");
    }

    @Test
    void heterogeneousListsAreCountedDownToTheirNestedValues() {
        var mixed = ConformanceComponent.DESCRIPTOR.model().operation("echoMixed").request();
        EchoMixed small = new EchoMixed();
        small.setList(Mixed.of(1.0, "abc"));
        assertEquals(2 + 2 + 8 + 2 + 3 + 2, sizes.estimate(small, mixed, Long.MAX_VALUE),
                "field, list, a double and a string, each with its framing");
        EchoMixed big = new EchoMixed();
        big.setList(Mixed.of("x", Mixed.of(Mixed.of(Tensor.of(new int[] {1000}, new double[1000])))));
        assertTrue(sizes.estimate(big, mixed, Long.MAX_VALUE) > 8000, "the tensor three lists down is counted");
        Mixed self = Mixed.of(1.0);
        self.getItems().add(self);
        EchoMixed cyclic = new EchoMixed();
        cyclic.setList(self);
        assertTrue(sizes.estimate(cyclic, mixed, Long.MAX_VALUE) < 100, "a list that holds itself is counted once");
    }

    private static CallRecord record(String protocol, long bytes, double micros) {
        return record(protocol, bytes, micros, 1);
    }

    private static CallRecord record(String protocol, long bytes, double micros, int callsInFlight) {
        String address = SUITE.endpoint(protocol).address();
        return new CallRecord("C", "echoDoubles", "id", protocol, address, "test", bytes,
                Duration.ofNanos((long) (micros * 1000)), null, -1, -1, -1, callsInFlight);
    }

    /**
     * A model per operation: an operation that computes for 20 ms on the server made the protocol
     * it went over look 20 ms slow for every other operation's small calls, which then went to
     * SOAP's prior.
     */
    @Test
    void anOperationThatComputesForMillisecondsDoesNotSendAnothersSmallCallsElsewhere() {
        AdaptivePolicy adaptive = new AdaptivePolicy();
        assertEquals("fast", adaptive.select(doubles(10), BOTH));
        for (int i = 0; i < 200; i++) {
            adaptive.observe(new CallRecord("C", "divide", "id", "fast", SUITE.endpoint("fast").address(), "test", 80,
                    Duration.ofMillis(20), null, -1, -1, -1, 1));
        }
        assertTrue(adaptive.predictMicros("fast", SUITE.endpoint("fast").address(), "divide", 80) > 10_000,
                "divide's calls take its computation's time");
        for (int i = 0; i < 3 * AdaptivePolicy.EXPLORE_EVERY; i++) {
            assertEquals("fast", adaptive.select(doubles(10), BOTH), "echoDoubles learned nothing from divide");
        }
    }

    @Test
    void timesMeasuredAmongManyCallsInFlightAreNotLearned() {
        AdaptivePolicy adaptive = new AdaptivePolicy();
        String fastAddress = SUITE.endpoint("fast").address();
        for (int i = 0; i < 60; i++) {   // quiet: the bulk protocol 300 µs a small call, SOAP 900 µs
            adaptive.observe(record("soap", 80, 900));
            adaptive.observe(record("fast", 80, 300));
        }
        double learned = adaptive.predictMicros("fast", fastAddress, "echoDoubles", 80);
        int saturated = AdaptivePolicy.SATURATED_PER_CORE * Runtime.getRuntime().availableProcessors() + 1;
        // then 64 callers on the same cores: the bulk protocol's calls wait behind its event loop (44 ms),
        // SOAP's, a thread each, much less (4 ms), though each SOAP call costs the machine three times more
        for (int i = 0; i < 300; i++) {
            adaptive.observe(record("soap", 80, 4_000, saturated));
            adaptive.observe(record("fast", 80, 44_000, saturated));
        }
        assertEquals(learned, adaptive.predictMicros("fast", fastAddress, "echoDoubles", 80), "nothing learned from the queues");
        assertEquals("fast", decide(adaptive, 10));
        adaptive.observe(record("fast", 80, 44_000, saturated - 1));
        assertTrue(adaptive.predictMicros("fast", fastAddress, "echoDoubles", 80) > learned, "at the threshold a call is learned");
    }

    @Test
    void aJvmBusyFromItsStartSendsSmallCallsToTheCheaperProtocolOfThePrior() {
        AdaptivePolicy adaptive = new AdaptivePolicy();
        int saturated = AdaptivePolicy.SATURATED_PER_CORE * Runtime.getRuntime().availableProcessors() + 1;
        for (int i = 0; i < 100; i++) {
            adaptive.observe(record("soap", 80, 4_000, saturated));
            adaptive.observe(record("fast", 80, 44_000, saturated));
        }
        assertEquals("fast", decide(adaptive, 10), "the bench's proportions: SOAP costs more per call too");
        assertEquals("fast", decide(adaptive, 100_000));
    }

    @Test
    void adaptiveLearnsTheCrossoverOfTheRealLink() {
        AdaptivePolicy adaptive = new AdaptivePolicy();
        // a link where SOAP costs 100 µs + 0.1 µs/byte and the bulk protocol 900 µs + 0.001 µs/byte:
        // the true crossover is near 8,080 bytes, about 1,000 doubles
        for (int round = 0; round < 60; round++) {
            for (long bytes : new long[] {100, 1_000, 50_000, 500_000}) {
                adaptive.observe(record("soap", bytes, 100 + 0.1 * bytes));
                adaptive.observe(record("fast", bytes, 900 + 0.001 * bytes));
            }
        }
        assertEquals("soap", decide(adaptive, 10));
        assertEquals("soap", decide(adaptive, 500));
        assertEquals("fast", decide(adaptive, 2_000));
        assertEquals("fast", decide(adaptive, 1_000_000));
        double soapAt1k = adaptive.predictMicros("soap", SUITE.endpoint("soap").address(), "echoDoubles", 8_000);
        assertEquals(900, soapAt1k, 90, "the learned SOAP model predicts the link within 10%");
    }

    /** The choice most of the time: exploration may pick the runner-up once in a while when close. */
    private String decide(AdaptivePolicy adaptive, int doubles) {
        int fast = 0;
        for (int i = 0; i < 64; i++) {
            if (adaptive.select(doubles(doubles), BOTH).equals("fast")) {
                fast++;
            }
        }
        return fast > 32 ? "fast" : "soap";
    }

    @Test
    void coldStartAndOutliersDoNotThrowTheModelOff() {
        AdaptivePolicy adaptive = new AdaptivePolicy();
        adaptive.observe(record("soap", 80, 40_000));          // connection set-up and a cold JIT
        adaptive.observe(record("soap", 80, 20_000));
        for (int i = 0; i < 30; i++) {
            adaptive.observe(record("soap", 80, 300));
        }
        adaptive.observe(record("soap", 80, 90_000));          // one GC pause
        double predicted = adaptive.predictMicros("soap", SUITE.endpoint("soap").address(), "echoDoubles", 80);
        assertTrue(predicted < 600, "prediction after the outlier: " + predicted);
    }

    @Test
    void adaptiveCountsALongListOnlyUpToTheCrossoverOfItsModels() {
        AdaptivePolicy adaptive = new AdaptivePolicy();
        CallContext huge = list(1_000_000);
        assertEquals("fast", adaptive.select(huge, BOTH));
        assertTrue(!huge.estimateIsExact(), "the walk stopped early");
        assertTrue(huge.estimatedBytes(0) < 64 * 1024, "counted " + huge.estimatedBytes(0) + " bytes, not 34 MB");
        CallContext array = doubles(1_000_000);
        adaptive.select(array, BOTH);
        assertTrue(array.estimateIsExact(), "an array is counted whole at no cost");
    }

    @Test
    void adaptiveNeverExploresWhereTheDifferenceIsLarge() {
        long[] now = {0};
        AdaptivePolicy adaptive = new AdaptivePolicy(() -> now[0]);
        for (int i = 0; i < 200; i++) {
            now[0] += AdaptivePolicy.REPROBE_NANOS + 1;   // stale every time: not even a re-probe
            assertEquals("fast", adaptive.select(doubles(1_000_000), BOTH), "8 MB over SOAP is never worth a try");
        }
    }

    @Test
    void aRunnerUpFiveTimesSlowerIsNeverExploredThoughOnlyMicrosecondsSlower() {
        AdaptivePolicy adaptive = learnedSmallCalls(25, 125);
        for (int i = 0; i < 10 * AdaptivePolicy.EXPLORE_EVERY; i++) {
            assertEquals("fast", adaptive.select(doubles(10), BOTH), "call " + i + ": a try would cost 4x the call");
        }
    }

    @Test
    void aRunnerUpWithinTheRatioIsTriedOnceInEveryExploreEveryCalls() {
        AdaptivePolicy adaptive = learnedSmallCalls(100, 130);
        int soap = 0;
        for (int i = 0; i < 10 * AdaptivePolicy.EXPLORE_EVERY; i++) {
            soap += adaptive.select(doubles(10), BOTH).equals("soap") ? 1 : 0;
        }
        assertEquals(10, soap, "one try in " + AdaptivePolicy.EXPLORE_EVERY);
    }

    /**
     * The models a decision reuses belong to one suite and one candidate list: a new suite (the
     * server moved) is decided from its own endpoints' models, and a shorter list (a protocol in
     * back-off) never yields a protocol it does not hold.
     */
    @Test
    void aNewSuiteOrAShorterCandidateListIsDecidedFromItsOwnModels() {
        AdaptivePolicy adaptive = learnedSmallCalls(900, 100);   // at the first suite, SOAP is the faster
        assertEquals("soap", adaptive.select(doubles(10), BOTH));
        ProtocolSuite moved = ProtocolSuite.of(List.of("fast", "soap"), List.of(new Endpoint("fast", "fast://h2:1/C"),
                new Endpoint("soap", "http://h2:2/axis2/services/C")));
        EchoDoubles m = new EchoDoubles();
        m.setValues(new double[10]);
        for (int i = 0; i < 3; i++) {   // priors at the new addresses: fast costs less per call
            assertEquals("fast", adaptive.select(new CallContext(DOUBLES, m, moved, sizes), moved.candidates()));
            assertEquals("soap", adaptive.select(doubles(10), BOTH), "the first suite keeps its own models");
        }
        assertEquals("fast", adaptive.select(doubles(10), List.of("fast")));
        assertEquals("soap", adaptive.select(doubles(10), BOTH));
    }

    /** A policy whose clock stands still (no re-probe) that learned small calls of these times. */
    private static AdaptivePolicy learnedSmallCalls(double fastMicros, double soapMicros) {
        AdaptivePolicy adaptive = new AdaptivePolicy(() -> 0);
        for (int i = 0; i < 60; i++) {
            adaptive.observe(record("fast", 80, fastMicros));
            adaptive.observe(record("soap", 80, soapMicros));
        }
        return adaptive;
    }

    @Test
    void aBurstOfSlowSamplesHardlyMovesTheModel() {
        AdaptivePolicy adaptive = new AdaptivePolicy();
        for (int i = 0; i < 60; i++) {
            adaptive.observe(record("fast", 160_000, 5_000));
        }
        double before = adaptive.predictMicros("fast", SUITE.endpoint("fast").address(), "echoDoubles", 160_000);
        for (int i = 0; i < 20; i++) {   // a burst of load: 3x SOAP's time for 20,000 doubles
            adaptive.observe(record("fast", 160_000, 120_000));
        }
        double after = adaptive.predictMicros("fast", SUITE.endpoint("fast").address(), "echoDoubles", 160_000);
        assertTrue(after < 2 * before, "20 slow samples moved the prediction from " + before + " to " + after);
        assertEquals("fast", adaptive.select(doubles(20_000), BOTH));
    }

    @Test
    void queueingThatBothProtocolsShareDoesNotHideTheCheaperOne() {
        AdaptivePolicy adaptive = new AdaptivePolicy();
        Random random = new Random(42);
        // 64 callers on two busy cores: each call waits in a queue (exponential, mean 5 ms) that
        // both protocols share, on top of its own cost: the bulk protocol 300 µs, SOAP 1,200 µs
        java.util.function.DoubleSupplier queue = () -> -5_000 * Math.log(1 - random.nextDouble());
        for (int i = 0; i < 300; i++) {
            adaptive.observe(record("soap", 80, 1_200 + queue.getAsDouble()));
            adaptive.observe(record("fast", 80, 300 + queue.getAsDouble()));
        }
        int fast = 0;
        for (int i = 0; i < 400; i++) {   // the calls go on, each one's time learned as it comes
            String chosen = adaptive.select(doubles(10), BOTH);
            fast += chosen.equals("fast") ? 1 : 0;
            adaptive.observe(record(chosen, 80, (chosen.equals("fast") ? 300 : 1_200) + queue.getAsDouble()));
            adaptive.observe(record("soap", 80, 1_200 + queue.getAsDouble()));   // calls pinned to SOAP
        }
        assertTrue(fast >= 0.9 * 400, "calls over the cheaper protocol: " + fast + " of 400");
    }

    /** A long stretch in which the bulk protocol measured 3x SOAP's time for 20,000 doubles (120 against 40 ms). */
    private static AdaptivePolicy afterASlowSpell(long[] now) {
        AdaptivePolicy adaptive = new AdaptivePolicy(() -> now[0]);
        for (int i = 0; i < 400; i++) {
            adaptive.observe(record("soap", 160_000, 40_000));
            adaptive.observe(record("fast", 160_000, 120_000));
        }
        return adaptive;
    }

    @Test
    void aReprobeFarFasterThanItsModelIsBelievedAtOnce() {
        long[] now = {0};
        // while the JIT compiled the bulk protocol's path its calls of 20,000 doubles took 120 ms
        AdaptivePolicy adaptive = afterASlowSpell(now);
        assertEquals("soap", decide(adaptive, 20_000));
        now[0] += AdaptivePolicy.REPROBE_NANOS + 1;
        assertEquals("fast", adaptive.select(doubles(20_000), BOTH), "re-probed");
        adaptive.observe(record("fast", 160_000, 5_000));   // compiled now: a 24th of what its model says
        assertEquals("fast", decide(adaptive, 20_000), "one such sample is enough, where each moved the model 8 %");
        double predicted = adaptive.predictMicros("fast", SUITE.endpoint("fast").address(), "echoDoubles", 160_000);
        assertTrue(predicted < 6_000, "prediction after the re-probe: " + predicted);
    }

    @Test
    void aSampleAQuarterOfTheEstimateOrMoreMovesItOnlyAStep() {
        AdaptivePolicy adaptive = new AdaptivePolicy();
        for (int i = 0; i < 60; i++) {   // 880 µs: the prior's fixed 400 µs and 3 ns a byte
            adaptive.observe(record("fast", 160_000, 880));
        }
        String fast = SUITE.endpoint("fast").address();
        double before = adaptive.predictMicros("fast", fast, "echoDoubles", 160_000);
        assertEquals(880, before, 10);
        // the per-byte part at 0.3 of the estimate: fast, but not far below
        adaptive.observe(record("fast", 160_000, 400 + 0.3 * (before - 400)));
        double after = adaptive.predictMicros("fast", fast, "echoDoubles", 160_000);
        assertTrue(after > 0.9 * before, "one step: " + before + " -> " + after);
    }

    @Test
    void aRunnerUpSpoiltBySlowSamplesIsTriedAgainOnceItIsStale() {
        long[] now = {0};
        AdaptivePolicy adaptive = afterASlowSpell(now);
        assertEquals("soap", adaptive.select(doubles(20_000), BOTH), "fresh models: the learned ranking holds");
        now[0] += AdaptivePolicy.REPROBE_NANOS / 2;
        assertEquals("soap", adaptive.select(doubles(20_000), BOTH), "not stale yet");
        now[0] += AdaptivePolicy.REPROBE_NANOS;
        assertEquals("fast", adaptive.select(doubles(20_000), BOTH), "stale and within reach: tried once more");
        assertEquals("soap", adaptive.select(doubles(20_000), BOTH), "one re-probe per interval, not a stampede");
        // the re-probe shows the slow spell has gone: the model follows and the bulk protocol wins again
        for (int i = 0; i < 30; i++) {
            adaptive.observe(record("fast", 160_000, 5_000));
        }
        assertEquals("fast", decide(adaptive, 20_000), "(SOAP's model, stale by now, may get one re-probe)");
    }
}
