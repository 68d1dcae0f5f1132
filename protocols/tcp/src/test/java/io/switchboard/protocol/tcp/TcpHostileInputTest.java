package io.switchboard.protocol.tcp;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.switchboard.codec.proto.ProtoSchemas;
import io.switchboard.codec.message.WireFormatException;
import io.switchboard.protocol.Endpoint;
import io.switchboard.protocol.ServerSettings;
import io.switchboard.testing.CountingSkeleton;
import io.switchboard.testing.conformance.ConformanceComponent;
import io.switchboard.testing.conformance.ConformanceImpl;
import java.time.Duration;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * A tcp server against hostile clients on a raw socket: every bad request is answered with its
 * error code (and the connection goes on) or, when the framing itself is broken, the connection is
 * closed; nothing runs that should not, and limits hold.
 */
class TcpHostileInputTest {
    private static final String SERVICE = ProtoSchemas.serviceName(ConformanceComponent.DESCRIPTOR.name());
    private final Map<String, AtomicInteger> runs = new ConcurrentHashMap<>();
    private final ConformanceImpl impl = new ConformanceImpl();
    private TcpServer server;

    private Endpoint start(ServerSettings settings, TcpLimits limits) {
        server = new TcpServer(settings, limits);
        return server.export(new CountingSkeleton(ConformanceComponent.skeleton(impl), "runs", runs, label -> { }));
    }

    private Endpoint start() {
        return start(ServerSettings.defaults(), TcpLimits.defaults());
    }

    @AfterEach
    void stop() {
        if (server != null) {
            server.close();
        }
    }

    private int runs() {
        AtomicInteger n = runs.get("runs");
        return n == null ? 0 : n.get();
    }

    private static RpcMeta request(String method, long id) {
        return RpcMeta.request(SERVICE, method, null, 0, id, null);
    }

    @Test
    void unknownServicesMethodsAndBadMessagesAreAnsweredAndTheConnectionGoesOn() throws Exception {
        try (RawTcp raw = new RawTcp(start())) {
            assertEquals(TcpErrors.NO_SERVICE, raw.call(RpcMeta.request("no.Such", "ping", null, 0, 1, null), new byte[0])
                    .meta().errorCode());
            assertEquals(TcpErrors.NO_METHOD, raw.call(request("noSuch", 2), new byte[0]).meta().errorCode());
            RawTcp.Answer bad = raw.call(request("echoDoubles", 3), new byte[] {(byte) 0xFF});
            assertEquals(TcpErrors.BAD_REQUEST, bad.meta().errorCode());
            assertEquals(WireFormatException.MALFORMED, bad.meta().userField(TcpErrors.REFUSED));
            RawTcp.Answer longId = raw.call(RpcMeta.request(SERVICE, "ping", "x".repeat(129), 0, 4, null), new byte[0]);
            assertEquals(TcpErrors.BAD_REQUEST, longId.meta().errorCode());
            for (String id : new String[] {"two words", "<x/>", "caf\u00e9", "a\nb"}) {
                RawTcp.Answer odd = raw.call(RpcMeta.request(SERVICE, "increment", id, 0, 6, null), new byte[] {8, 1});
                assertEquals(TcpErrors.BAD_REQUEST, odd.meta().errorCode(), id);
                assertEquals(WireFormatException.MALFORMED, odd.meta().userField(TcpErrors.REFUSED), id);
            }
            raw.write(RawTcp.frame(RpcMeta.request(SERVICE, "ping", null, 0, 99, Map.of(TcpErrors.CANCEL, "1")),
                    new byte[0]));   // a cancel of no call: ignored
            RawTcp.Answer ok = raw.call(request("ping", 5), new byte[0]);
            assertEquals(0, ok.meta().errorCode());
            assertEquals(5, ok.meta().correlationId());
        }
        assertEquals(1, runs(), "only the good ping ran: no increment under a malformed call id");
    }

    @Test
    void aRequestOverTheFrameLimitIsRefusedFromItsMetaAndTheConnectionGoesOn() throws Exception {
        try (RawTcp raw = new RawTcp(start(ServerSettings.defaults(), TcpLimits.defaults().withMaxFrameBytes(1024)))) {
            RawTcp.Answer a = raw.call(request("echoDoubles", 1), new byte[4096]);
            assertEquals(TcpErrors.LIMIT, a.meta().errorCode());
            assertEquals(WireFormatException.SIZE_LIMIT, a.meta().userField(TcpErrors.REFUSED));
            assertEquals(1, a.meta().correlationId());
            assertEquals(0, raw.call(request("ping", 2), new byte[0]).meta().errorCode());
        }
        assertEquals(1, runs());
    }

    @Test
    void brokenFramingClosesTheConnection() throws Exception {
        Endpoint at = start();
        try (RawTcp raw = new RawTcp(at)) {
            raw.write("GET / HTTP/1.1\r\nHost: x\r\n\r\n".getBytes());
            assertTrue(raw.closedByServer(), "not PRPC");
        }
        try (RawTcp raw = new RawTcp(at)) {
            raw.write(RawTcp.frame(RpcMeta.response(1, 0, null, null), new byte[0]));
            assertTrue(raw.closedByServer(), "an answer sent to a server");
        }
        try (RawTcp raw = new RawTcp(at)) {
            assertEquals(0, raw.call(request("ping", 1), new byte[0]).meta().errorCode(), "the server still serves");
        }
    }

    @Test
    void aSenderSlowerThanTheMinimumRateIsCutOff() throws Exception {
        Endpoint at = start(ServerSettings.defaults().withRequestTimeout(Duration.ofMillis(300))
                .withMinRequestBytesPerSecond(1000), TcpLimits.defaults());
        byte[] frame = RawTcp.frame(request("echoDoubles", 1), new byte[2000]);
        try (RawTcp raw = new RawTcp(at)) {
            long start = System.nanoTime();
            raw.write(java.util.Arrays.copyOf(frame, 100));   // and then nothing: 300 ms + 2 s at 1000 bytes/s
            assertTrue(raw.closedByServer());
            long ms = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - start);
            assertTrue(ms >= 2000 && ms < 20_000, "cut after " + ms + " ms");
        }
        assertEquals(1, server.slowSenders());
        assertEquals(0, runs());
    }

    @Test
    void connectionsOverTheLimitAreAnsweredBusyAndClosed() throws Exception {
        Endpoint at = start(ServerSettings.defaults().withMaxConnections(1), TcpLimits.defaults());
        try (RawTcp first = new RawTcp(at)) {
            assertEquals(0, first.call(request("ping", 1), new byte[0]).meta().errorCode());
            try (RawTcp second = new RawTcp(at)) {
                RawTcp.Answer busy = second.call(request("increment", 1), new byte[] {8, 1});
                assertEquals(TcpErrors.OVERCROWDED, busy.meta().errorCode());
                assertTrue(second.closedByServer());
            }
            assertEquals(0, first.call(request("ping", 2), new byte[0]).meta().errorCode());
        }
        assertEquals(1, server.connectionRefusals());
        assertEquals(0, impl.increments.get(), "the refused call did not run");
    }

    @Test
    void callsOverTheLimitOfAConnectionAreAnsweredBusy() throws Exception {
        Endpoint at = start(ServerSettings.defaults(), TcpLimits.defaults().withMaxCallsPerConnection(1));
        try (RawTcp raw = new RawTcp(at)) {
            // spin(values = [], maxRounds = 600000): field 2, varint
            raw.write(RawTcp.frame(request("spin", 1), new byte[] {16, (byte) 0xC0, (byte) 0xCF, 0x24}));
            assertTrue(impl.spinStarted.await(30, TimeUnit.SECONDS));
            RawTcp.Answer busy = raw.call(request("increment", 2), new byte[] {8, 1});
            assertEquals(TcpErrors.OVERCROWDED, busy.meta().errorCode());
            assertEquals(2, busy.meta().correlationId());
            RawTcp.Answer dup = raw.call(request("ping", 1), new byte[0]);
            assertEquals(TcpErrors.OVERCROWDED, dup.meta().errorCode(), "the limit is checked first");
            raw.write(RawTcp.frame(RpcMeta.request(SERVICE, "spin", null, 0, 1, Map.of(TcpErrors.CANCEL, "1")),
                    new byte[0]));
            assertTrue(impl.spinSawCancel.await(30, TimeUnit.SECONDS));
        }
        assertEquals(0, impl.increments.get());
    }

    /**
     * An operation that notices its deadline itself and returns is answered as timed out, not with
     * its result: run on the event loop (fast runs first make it so), it returns before the
     * deadline's timer on that loop can run, which used to send the result after the deadline.
     */
    @Test
    void anOperationThatEndsAfterItsDeadlineIsAnsweredAsTimedOut() throws Exception {
        TcpLimits d = TcpLimits.defaults();
        try (RawTcp raw = new RawTcp(start(ServerSettings.defaults(), new TcpLimits(d.maxFrameBytes(), d.maxMetaBytes(),
                d.maxCallsPerConnection(), 1_000_000, d.policyMaxBytes())))) {
            long id = 1;
            for (int i = 0; i < InlineRuns.FAST_RUNS; i++) {   // spin(values = [], maxRounds = 0): fast, so later runs are inline
                assertEquals(0, raw.call(request("spin", id++), new byte[] {16, 0}).meta().errorCode());
            }
            // spin(values = [], maxRounds = 600000) with a 100 ms timeout: it ends when it sees its deadline
            RawTcp.Answer late = raw.call(RpcMeta.request(SERVICE, "spin", null, 100, id, null),
                    new byte[] {16, (byte) 0xC0, (byte) 0xCF, 0x24});
            assertEquals(TcpErrors.TIMED_OUT, late.meta().errorCode(), late.meta().toString());
            assertEquals(id, late.meta().correlationId());
        }
    }

    @Test
    void aSecondCallWithTheCorrelationIdOfOneUnderWayIsRefused() throws Exception {
        try (RawTcp raw = new RawTcp(start())) {
            raw.write(RawTcp.frame(request("spin", 1), new byte[] {16, (byte) 0xC0, (byte) 0xCF, 0x24}));
            assertTrue(impl.spinStarted.await(30, TimeUnit.SECONDS));
            RawTcp.Answer dup = raw.call(request("increment", 1), new byte[] {8, 1});
            assertEquals(TcpErrors.BAD_REQUEST, dup.meta().errorCode());
            raw.write(RawTcp.frame(RpcMeta.request(SERVICE, "spin", null, 0, 1, Map.of(TcpErrors.CANCEL, "1")),
                    new byte[0]));
            assertTrue(impl.spinSawCancel.await(30, TimeUnit.SECONDS));
        }
        assertEquals(0, impl.increments.get());
    }
}
