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

    /** {@link WayCounts#add} runs inside every timed call of a policy row: what it allocates, the row pays. */
    @Test
    void countingACallAllocatesNothing() {
        WayCounts ways = new WayCounts();
        CallRecord overTheSocket = record("grpc", "unix", "adaptive (call policy)", null);
        CallRecord overTcp = record("tcp", "tcp", "adaptive (call policy)", null);
        com.sun.management.ThreadMXBean threads = (com.sun.management.ThreadMXBean) ManagementFactory.getThreadMXBean();
        long before = threads.getCurrentThreadAllocatedBytes();
        for (int i = 0; i < 10_000; i++) {
            ways.add(overTheSocket);
            ways.add(overTcp);
        }
        long allocated = threads.getCurrentThreadAllocatedBytes() - before;
        assertEquals(20_000, ways.total());
        assertTrue(allocated < 4096, "20,000 counts allocated " + allocated + " bytes");
    }

    @Test
    void nothingCountedSaysSo() {
        WayCounts ways = new WayCounts();
        assertEquals(0, ways.total());
        assertEquals("calls over none", ways.note());
        assertEquals("", ways.csv());
    }
}
