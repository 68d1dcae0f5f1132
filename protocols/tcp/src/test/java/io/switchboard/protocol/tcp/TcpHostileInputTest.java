package io.switchboard.protocol.tcp;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.switchboard.codec.proto.ProtoCodec;
import io.switchboard.codec.proto.ProtoSchemas;
import io.switchboard.codec.message.WireFormatException;
import io.switchboard.protocol.Endpoint;
import io.switchboard.protocol.ServerSettings;
import io.switchboard.testing.CountingSkeleton;
import io.switchboard.testing.conformance.ConformanceComponent;
import io.switchboard.testing.conformance.ConformanceImpl;
import io.switchboard.testing.conformance.EchoDoubles;
import java.io.IOException;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
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
    void aRequestOverTheFrameLimitIsAnsweredElimitAtOnceAndItsConnectionClosedUnread() throws Exception {
        Endpoint at = start(ServerSettings.defaults(), TcpLimits.defaults().withMaxFrameBytes(1024));
        try (RawTcp raw = new RawTcp(at)) {
            byte[] whole = RawTcp.frame(request("echoDoubles", 1), new byte[4096]);
            raw.write(java.util.Arrays.copyOf(whole, whole.length - 4096));   // header and meta: no data ever follows
            RawTcp.Answer a = raw.read();
            assertEquals(TcpErrors.LIMIT, a.meta().errorCode());
            assertEquals(WireFormatException.SIZE_LIMIT, a.meta().userField(TcpErrors.REFUSED));
            assertEquals(1, a.meta().correlationId());
            assertTrue(raw.closedByServer());
        }
        try (RawTcp raw = new RawTcp(at)) {
            // the whole frame sent: the answer still arrives ahead of the connection's end
            RawTcp.Answer a = raw.call(request("echoDoubles", 2), new byte[64 << 10]);
            assertEquals(TcpErrors.LIMIT, a.meta().errorCode());
            assertTrue(raw.closedByServer());
        }
        try (RawTcp raw = new RawTcp(at)) {
            assertEquals(0, raw.call(request("ping", 3), new byte[0]).meta().errorCode(), "the server still serves");
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
    void brokenFramingInALoopIsCountedEveryTimeButWarnedOfOnceInAHundred() throws Exception {
        Endpoint at = start();
        java.io.PrintStream err = System.err;
        java.io.ByteArrayOutputStream log = new java.io.ByteArrayOutputStream();
        System.setErr(new java.io.PrintStream(log, true, java.nio.charset.StandardCharsets.UTF_8));
        try {
            for (int i = 0; i < 250; i++) {
                try (RawTcp raw = new RawTcp(at)) {
                    raw.write("GET / HTTP/1.1\r\nHost: x\r\n\r\n".getBytes());
                    assertTrue(raw.closedByServer(), "connection " + i + " not closed");
                }
            }
        } finally {
            System.setErr(err);
        }
        assertEquals(250, server.brokenFramings());
        String warned = log.toString(java.nio.charset.StandardCharsets.UTF_8);
        List<String> lines = warned.lines().filter(l -> l.contains("closed for broken framing so far")).toList();
        assertEquals(3, lines.size(), warned);   // the 1st, 100th and 200th
        assertTrue(lines.get(2).contains("(200 connections"), lines.get(2));
        try (RawTcp raw = new RawTcp(at)) {
            assertEquals(0, raw.call(request("ping", 1), new byte[0]).meta().errorCode(), "the server still serves");
        }
    }

    @Test
    void aFrameMustArriveWholeWithinTheRequestTimeoutWhateverSizeItAnnounces() throws Exception {
        Endpoint at = start(ServerSettings.defaults().withRequestTimeout(Duration.ofMillis(300))
                .withMinRequestBytesPerSecond(1000), TcpLimits.defaults());
        // about 4 MB announced: at the minimum rate it would have had more than an hour
        byte[] frame = RawTcp.frame(request("echoDoubles", 1), new byte[4_000_000]);
        try (RawTcp raw = new RawTcp(at)) {
            long start = System.nanoTime();
            raw.write(java.util.Arrays.copyOf(frame, 100 + 1024));   // and then nothing
            assertTrue(raw.closedByServer());
            long ms = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - start);
            assertTrue(ms >= 250 && ms < 20_000, "cut after " + ms + " ms");
        }
        assertEquals(1, server.slowSenders());
        assertEquals(0, runs());
        awaitCount(() -> server.budget().reserved(), 0);
    }

    @Test
    void aConnectionQuietForTheIdleTimeoutIsClosedButNotOneWhoseCallStillRuns() throws Exception {
        Endpoint at = start(ServerSettings.defaults().withIdleTimeout(Duration.ofMillis(200)), TcpLimits.defaults());
        try (RawTcp working = new RawTcp(at)) {
            working.write(RawTcp.frame(request("spin", 1), new byte[] {16, (byte) 0xC0, (byte) 0xCF, 0x24}));
            assertTrue(impl.spinStarted.await(30, TimeUnit.SECONDS));
            try (RawTcp quiet = new RawTcp(at)) {
                long start = System.nanoTime();
                assertTrue(quiet.closedByServer(), "a connection that sent nothing was closed");
                long ms = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - start);
                assertTrue(ms >= 150, "closed after " + ms + " ms, before its idle timeout");
            }
            // one more idle timeout: the working connection, quiet as long, was looked at meanwhile
            try (RawTcp later = new RawTcp(at)) {
                assertTrue(later.closedByServer());
            }
            assertEquals(0, working.call(request("ping", 2), new byte[0]).meta().errorCode(),
                    "the connection whose call still runs is open");
            working.write(RawTcp.frame(RpcMeta.request(SERVICE, "spin", null, 0, 1, Map.of(TcpErrors.CANCEL, "1")),
                    new byte[0]));
            assertTrue(impl.spinSawCancel.await(30, TimeUnit.SECONDS));
        }
    }

    @Test
    void atTheConnectionLimitTheIdleConnectionMakesWayForANewOne() throws Exception {
        Endpoint at = start(ServerSettings.defaults().withMaxConnections(1), TcpLimits.defaults());
        try (RawTcp first = new RawTcp(at)) {
            assertEquals(0, first.call(request("ping", 1), new byte[0]).meta().errorCode());
            try (RawTcp second = new RawTcp(at)) {
                assertEquals(0, second.call(request("ping", 1), new byte[0]).meta().errorCode());
                assertTrue(first.closedByServer(), "the idle connection was closed for the new one");
            }
        }
        assertEquals(1, server.evictions());
        assertEquals(0, server.connectionRefusals());
        assertEquals(1, server.shedConnections(), "the displaced connection counts as shed");
    }

    @Test
    void atTheConnectionLimitWithEveryConnectionWorkingANewOneIsAnsweredBusyAndClosed() throws Exception {
        Endpoint at = start(ServerSettings.defaults().withMaxConnections(1), TcpLimits.defaults());
        try (RawTcp first = new RawTcp(at)) {
            first.write(RawTcp.frame(request("spin", 1), new byte[] {16, (byte) 0xC0, (byte) 0xCF, 0x24}));
            assertTrue(impl.spinStarted.await(30, TimeUnit.SECONDS));
            try (RawTcp second = new RawTcp(at)) {
                RawTcp.Answer busy = second.call(request("increment", 1), new byte[] {8, 1});
                assertEquals(TcpErrors.OVERCROWDED, busy.meta().errorCode());
                assertTrue(second.closedByServer());
            }
            first.write(RawTcp.frame(RpcMeta.request(SERVICE, "spin", null, 0, 1, Map.of(TcpErrors.CANCEL, "1")),
                    new byte[0]));
            assertTrue(impl.spinSawCancel.await(30, TimeUnit.SECONDS));
        }
        assertEquals(1, server.connectionRefusals());
        assertEquals(0, server.evictions());
        assertEquals(1, server.shedConnections(), "the refused connection counts as shed");
        assertEquals(0, impl.increments.get(), "the refused call did not run");
    }

    @Test
    void refusedConnectionsThatSendNothingAreFewAtATimeAndAllClosed() throws Exception {
        Endpoint at = start(ServerSettings.defaults().withMaxConnections(1), TcpLimits.defaults());
        List<RawTcp> flood = new ArrayList<>();
        try (RawTcp first = new RawTcp(at)) {
            first.write(RawTcp.frame(request("spin", 1), new byte[] {16, (byte) 0xC0, (byte) 0xCF, 0x24}));
            assertTrue(impl.spinStarted.await(30, TimeUnit.SECONDS));
            int n = 3 * io.switchboard.protocol.spi.ConnectionShares.MAX_REFUSED_ANSWERING;
            for (int i = 0; i < n; i++) {
                flood.add(new RawTcp(at));
            }
            long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(30);
            while (server.connectionRefusals() < n) {
                assertTrue(System.nanoTime() < deadline, server.connectionRefusals() + " refused");
                assertTrue(server.refusedAnswering() <= io.switchboard.protocol.spi.ConnectionShares.MAX_REFUSED_ANSWERING, server.refusedAnswering() + " answering");
                Thread.sleep(1);
            }
            for (RawTcp raw : flood) {   // closed at once past the first 16, the rest after their lifetime
                assertTrue(raw.closedByServer(), "a refused connection that sent nothing");
            }
            while (server.refusedAnswering() > 0) {
                assertTrue(System.nanoTime() < deadline, server.refusedAnswering() + " refused connections still open");
                Thread.sleep(1);
            }
            try (RawTcp late = new RawTcp(at)) {   // and one that asks is still answered, not cut
                assertEquals(TcpErrors.OVERCROWDED, late.call(request("increment", 1), new byte[] {8, 1}).meta().errorCode());
            }
            first.write(RawTcp.frame(RpcMeta.request(SERVICE, "spin", null, 0, 1, Map.of(TcpErrors.CANCEL, "1")),
                    new byte[0]));
            assertTrue(impl.spinSawCancel.await(30, TimeUnit.SECONDS));
        } finally {
            for (RawTcp raw : flood) {
                raw.close();
            }
        }
        assertEquals(0, server.evictions(), "the working connection was not closed");
        assertEquals(0, impl.increments.get(), "no refused call ran");
    }

    /**
     * The attack of issue 39: many connections from one host, each announcing a frame of about 4 MB
     * and sending its meta and 1 KiB, then nothing. They cost that address its own oldest
     * connections, and at most the large-frame budget; a client of the same host is answered at once.
     */
    @Test
    void sixHundredStalledConnectionsFromOneAddressLeaveAClientOfTheSameHostAnswered() throws Exception {
        int stalled = 600;
        Endpoint at = start();
        int perAddress = ServerSettings.defaults().maxConnectionsPerAddress();
        byte[] attack = java.util.Arrays.copyOf(RawTcp.frame(request("echoDoubles", 1), new byte[4_000_000]),
                RawTcp.frame(request("echoDoubles", 1), new byte[0]).length + 1024);
        java.util.List<RawTcp> attackers = new java.util.ArrayList<>();
        try {
            for (int i = 0; i < stalled; i++) {
                RawTcp a = new RawTcp(at);
                attackers.add(a);
                a.write(attack);
            }
            // every one of them seen by the server, so the good client is the newest connection
            awaitCount(() -> server.evictions() + server.connectionRefusals(), stalled - perAddress);
            assertEquals(0, server.connectionRefusals(), "stalled connections make way, none is refused");
            assertTrue(server.openConnections() <= perAddress, server.openConnections() + " open");
            assertTrue(server.budget().reserved() <= server.budget().bytes());
            long start = System.nanoTime();
            try (RawTcp good = new RawTcp(at)) {
                assertEquals(0, good.call(request("ping", 7), new byte[0]).meta().errorCode());
            }
            long ms = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - start);
            assertTrue(ms < 2000, "the good client waited " + ms + " ms");
        } finally {
            for (RawTcp a : attackers) {
                a.close();
            }
        }
        assertEquals(1, runs(), "only the good ping ran");
    }

    @Test
    void largeFramesBeyondTheServersBufferBudgetAreAnsweredBusyWithoutBeingBuffered() throws Exception {
        Endpoint at = start(ServerSettings.defaults(), TcpLimits.defaults().withLargeFrameBudgetBytes(6 << 20));
        byte[] whole = RawTcp.frame(request("echoDoubles", 1), new byte[4_000_000]);
        byte[] begun = java.util.Arrays.copyOf(whole, whole.length - 4_000_000 + 1024);
        try (RawTcp first = new RawTcp(at); RawTcp second = new RawTcp(at)) {
            first.write(begun);
            awaitCount(() -> server.budget().reserved() > 0 ? 1 : 0, 1);
            long held = server.budget().reserved();
            second.write(begun);
            RawTcp.Answer busy = second.read();
            assertEquals(TcpErrors.OVERCROWDED, busy.meta().errorCode());
            assertTrue(busy.meta().errorText().contains("large frames"), busy.meta().errorText());
            assertEquals(held, server.budget().reserved(), "the second frame holds nothing");
            assertEquals(1, server.budgetRefusals());
        }
        awaitCount(() -> server.budget().reserved(), 0);   // the first one's reservation is given back on close
        assertEquals(0, runs());
    }

    @Test
    void oneConnectionRunsAtMostHalfTheServersCalls() throws Exception {
        Endpoint at = start(ServerSettings.defaults().withMaxConcurrentCalls(2), TcpLimits.defaults());
        try (RawTcp hog = new RawTcp(at); RawTcp other = new RawTcp(at)) {
            hog.write(RawTcp.frame(request("spin", 1), new byte[] {16, (byte) 0xC0, (byte) 0xCF, 0x24}));
            assertTrue(impl.spinStarted.await(30, TimeUnit.SECONDS));
            RawTcp.Answer busy = hog.call(request("increment", 2), new byte[] {8, 1});
            assertEquals(TcpErrors.OVERCROWDED, busy.meta().errorCode());
            assertTrue(busy.meta().errorText().contains("this connection"), busy.meta().errorText());
            assertEquals(0, other.call(request("increment", 1), new byte[] {8, 1}).meta().errorCode(),
                    "a worker is left for another connection");
            hog.write(RawTcp.frame(RpcMeta.request(SERVICE, "spin", null, 0, 1, Map.of(TcpErrors.CANCEL, "1")),
                    new byte[0]));
            assertTrue(impl.spinSawCancel.await(30, TimeUnit.SECONDS));
        }
        assertEquals(1, impl.increments.get());
    }

    /**
     * A client that sends 64 calls with answers of 1 MiB each and reads none of them: the server
     * stops reading its requests once the answers it cannot write pass the write water mark, so
     * it holds a few of those answers, not 64 MiB; the writer is then held by TCP's own flow
     * control until the server closes the connection at its request timeout.
     */
    @Test
    void aClientThatReadsNoAnswersIsNoLongerRead() throws Exception {
        Endpoint at = start(ServerSettings.defaults().withRequestTimeout(Duration.ofSeconds(2))
                .withIdleTimeout(Duration.ofSeconds(2)), TcpLimits.defaults());
        ProtoCodec codec = ConformanceComponent.DESCRIPTOR.codec(ProtoCodec.class);
        EchoDoubles m = new EchoDoubles();
        m.setValues(new double[1 << 17]);
        byte[] message = codec.toBytes("echoDoubles", m, 10);
        int calls = 64;
        AtomicInteger written = new AtomicInteger();
        try (Socket hog = new Socket()) {
            hog.setReceiveBufferSize(4096);
            hog.connect(new InetSocketAddress(at.uri().getHost(), at.uri().getPort()));
            Thread writer = new Thread(() -> {
                try {
                    for (int id = 1; id <= calls; id++) {
                        hog.getOutputStream().write(RawTcp.frame(request("echoDoubles", id), message));
                        written.incrementAndGet();
                    }
                } catch (IOException closedByTheServer) {
                    // expected: the server stops reading, then closes the connection
                }
            });
            writer.setDaemon(true);
            writer.start();
            awaitCount(() -> server.readsPaused() > 0 ? 1 : 0, 1);
            writer.join(60_000);
            assertTrue(!writer.isAlive(), "the server never closed the connection");
            assertTrue(written.get() < calls, "the server read all " + calls + " requests: " + calls
                    + " MiB of answers held for a client that takes none");
        }
        assertTrue(runs() < calls, runs() + " calls ran");
    }

    /** Waits, in a bounded loop, until the counter {@code count} reaches {@code expected}. */
    private static void awaitCount(java.util.function.LongSupplier count, long expected) throws InterruptedException {
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(60);
        while (count.getAsLong() != expected) {
            assertTrue(System.nanoTime() < deadline, "still " + count.getAsLong() + ", expected " + expected);
            Thread.sleep(1);
        }
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
