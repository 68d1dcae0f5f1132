package io.switchboard.bench;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.switchboard.metastub.CallRecord;
import java.lang.management.ManagementFactory;
import java.time.Duration;
import org.junit.jupiter.api.Test;

/** What a policy row's counts make of its calls' records: ways, fallbacks, failed attempts. */
class WayCountsTest {
    private static CallRecord record(String protocol, String via, String reason, String error) {
        return new CallRecord("Echo", "echoDoubles", "id", protocol, "addr", reason, 80, Duration.ofNanos(1000), error,
                -1, -1, -1, 1, via);
    }

    @Test
    void countsAnswersByProtocolAndTcpsWayAndTheFallbacksAmongThem() {
        WayCounts ways = new WayCounts();
        for (int i = 0; i < 1200; i++) {
            ways.add(record("tcp", "unix", "adaptive: fastest", null));
        }
        ways.add(record("tcp", "tcp", "adaptive: fastest", null));
        ways.add(record("tcp", "tcp", "adaptive: fastest", null));
        ways.add(record("grpc", null, "adaptive: exploring", "TransportException: refused"));   // failed: not counted
        ways.add(record("soap", null, "fallback from grpc (refused)", null));

        assertEquals(1203, ways.total());
        assertEquals(1, ways.fallbacks());
        assertEquals("calls over tcp-unix 1,200, tcp 2, soap 1 (1 fallback)", ways.note());
        assertEquals("tcp-unix:1200 tcp:2 soap:1", ways.csv());
    }

    @Test
    void grpcIsCountedByItsWayAsTcpIs() {
        WayCounts ways = new WayCounts();
        ways.add(record("grpc", "unix", "size: over 2 MiB", null));
        ways.add(record("grpc", "unix", "size: over 2 MiB", null));
        ways.add(record("grpc", "tcp", "size: over 2 MiB", null));
        ways.add(record("tcp", "unix", "size: up to 2 MiB", null));

        assertEquals(4, ways.total());
        assertEquals("calls over grpc-unix 2, grpc 1, tcp-unix 1", ways.note());
        assertEquals("grpc-unix:2 grpc:1 tcp-unix:1", ways.csv());
    }

    /** {@link WayCounts#hold} runs inside every timed call of a policy row: what it allocates, the row pays. */
    @Test
    void holdingAndCountingACallAllocateNothing() {
        WayCounts ways = new WayCounts();
        CallRecord overTheSocket = record("grpc", "unix", "adaptive (call policy)", null);
        CallRecord overTcp = record("tcp", "tcp", "adaptive (call policy)", null);
        com.sun.management.ThreadMXBean threads = (com.sun.management.ThreadMXBean) ManagementFactory.getThreadMXBean();
        long before = threads.getCurrentThreadAllocatedBytes();
        for (int i = 0; i < 10_000; i++) {
            ways.hold(overTheSocket);
            ways.hold(overTcp);
            ways.countHeld();
        }
        long allocated = threads.getCurrentThreadAllocatedBytes() - before;
        assertEquals(20_000, ways.total());
        assertTrue(allocated < 4096, "20,000 counts allocated " + allocated + " bytes");
    }

    @Test
    void aHeldRecordIsCountedOnlyWhenTheHeldAreCounted() {
        WayCounts ways = new WayCounts();
        ways.hold(record("grpc", "unix", "adaptive (call policy)", "TransportException: refused"));
        ways.hold(record("soap", null, "fallback from grpc (refused)", null));
        assertEquals(0, ways.total());
        ways.countHeld();
        assertEquals(1, ways.total());
        assertEquals("calls over soap 1 (1 fallback)", ways.note());
        ways.countHeld();   // each held record once
        assertEquals(1, ways.total());
    }

    @Test
    void aCallOfMoreAttemptsThanTheHoldHasRoomForLosesNone() {
        WayCounts ways = new WayCounts();
        for (int i = 0; i < 20; i++) {
            ways.hold(record("tcp", "unix", "adaptive (call policy)", null));
        }
        ways.countHeld();
        assertEquals(20, ways.total());
    }

    /**
     * A policy row's listener only holds its records during a timed call; the sweep counts them
     * after the call's time is taken, so the row does not pay, inside its timing, for bookkeeping
     * the pinned rows do not have.
     */
    @Test
    void theSweepCountsAPolicyRowsRecordsAfterTheCallsTime() {
        WayCounts[] given = new WayCounts[1];
        long[] countedDuringTheCall = {-1};
        Peer policyRow = new Peer() {
            @Override
            public String name() {
                return "adaptive";
            }

            @Override
            public boolean countWays(WayCounts ways) {
                given[0] = ways;
                return true;
            }

            @Override
            public Object roundTrip(Payload payload) {
                given[0].hold(record("tcp", "unix", "adaptive (call policy)", null));
                countedDuringTheCall[0] = given[0].total();
                return null;
            }

            @Override
            public long requestBytes(Payload payload) {
                return 0;
            }

            @Override
            public void close() {
            }
        };
        Sweep.State state = new Sweep.State();
        state.countWays(policyRow, true);
        long t = state.call(policyRow, Payload.of(Workload.EMPTY, 0), true);

        assertTrue(t >= 0, "the call was timed");
        assertEquals(0, countedDuringTheCall[0], "nothing counted while the call was timed");
        assertEquals(1, given[0].total(), "counted once its time was taken");
    }

    @Test
    void nothingCountedSaysSo() {
        WayCounts ways = new WayCounts();
        assertEquals(0, ways.total());
        assertEquals("calls over none", ways.note());
        assertEquals("", ways.csv());
    }
}
