package io.switchboard.protocol.tcp;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.switchboard.codec.message.WireFormatException;
import io.switchboard.protocol.CallOptions;
import io.switchboard.protocol.ClientSettings;
import io.switchboard.protocol.Endpoint;
import io.switchboard.protocol.RefusedException;
import io.switchboard.protocol.ServerSettings;
import io.switchboard.protocol.TransportException;
import io.switchboard.protocol.WireBytes;
import io.switchboard.protocol.spi.ProtocolClient;
import io.switchboard.protocol.spi.ProtocolServer;
import io.switchboard.protocol.spi.Transport;
import io.switchboard.testing.conformance.ConformanceComponent;
import io.switchboard.testing.conformance.ConformanceImpl;
import io.switchboard.testing.conformance.ConformanceStub;
import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.Executor;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/** What tcp does beyond the conformance suite: cancellation and deadlines on the wire, answers out of order, the frame limit. */
class TcpCallsTest {
    private final TcpProtocolProvider provider = new TcpProtocolProvider();
    private ConformanceImpl impl;
    private ProtocolServer server;
    private ProtocolClient client;
    private Transport transport;
    private ConformanceStub stub;

    @BeforeEach
    void start() {
        impl = new ConformanceImpl();
        server = provider.newServer(ServerSettings.defaults());
        Endpoint at = server.export(ConformanceComponent.skeleton(impl));
        client = provider.newClient(ClientSettings.defaults());
        transport = client.connect(ConformanceComponent.DESCRIPTOR, at);
        stub = ConformanceComponent.stub(transport);
    }

    @AfterEach
    void stop() {
        client.close();
        server.close();
    }

    @Test
    void cancellingAnAsyncCallStopsTheOperationOnTheServer() throws Exception {
        CompletableFuture<Long> call = stub.spinAsync(new double[0], 600_000);
        assertTrue(impl.spinStarted.await(30, TimeUnit.SECONDS), "the operation started");
        call.cancel(true);
        assertTrue(impl.spinSawCancel.await(30, TimeUnit.SECONDS), "the server saw the cancel");
        stub.ping();
    }

    @Test
    void aCancelIsWrittenByTheThreadThatCancelsWithoutWaitingForTheClientsExecutor() throws Exception {
        // an executor that is slow to take work, as one that must start a thread or find a CPU for
        // one: once held, it takes nothing until the server has seen the cancel, or 5 s have passed
        ExecutorService pool = Executors.newCachedThreadPool();
        AtomicBoolean held = new AtomicBoolean();
        AtomicBoolean stalled = new AtomicBoolean();
        Executor slow = task -> {
            try {
                if (held.get() && !impl.spinSawCancel.await(5, TimeUnit.SECONDS)) {
                    stalled.set(true);
                }
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
            pool.execute(task);
        };
        try (ProtocolClient own = provider.newClient(ClientSettings.defaults().withExecutor(slow))) {
            ConformanceStub s = ConformanceComponent.stub(own.connect(ConformanceComponent.DESCRIPTOR,
                    transport.endpoint()));
            CompletableFuture<Long> call = s.spinAsync(new double[0], 600_000);
            assertTrue(impl.spinStarted.await(30, TimeUnit.SECONDS), "the operation started");
            held.set(true);
            assertTrue(call.cancel(true));
            assertTrue(impl.spinSawCancel.await(30, TimeUnit.SECONDS), "the server saw the cancel");
            assertFalse(stalled.get(), "the cancel frame waited for the client's executor");
        } finally {
            pool.shutdownNow();
        }
    }

    @Test
    void aTimedOutCallFailsAsMayHaveRunAndIsStoppedOnTheServer() throws Exception {
        ConformanceStub hurried = stub.withOptions(CallOptions.DEFAULT.withTimeout(Duration.ofMillis(300)));
        TransportException e = assertThrows(TransportException.class, () -> hurried.spin(new double[0], 600_000));
        assertEquals(TransportException.Delivery.MAY_HAVE_RUN, e.delivery(), e.getMessage());
        assertTrue(e.getMessage().contains("deadline"), e.getMessage());
        assertTrue(impl.spinSawCancel.await(30, TimeUnit.SECONDS), "the server stopped the operation");
        stub.ping();
    }

    @Test
    void theServerStopsACallWhoseTimeoutPassedAndSaysSo() throws Exception {
        // the server's timer (timeout_ms) and the client's race; either way the operation is stopped
        CompletableFuture<Long> call = stub.withOptions(CallOptions.DEFAULT.withTimeout(Duration.ofMillis(200)))
                .spinAsync(new double[0], 600_000);
        ExecutionException e = assertThrows(ExecutionException.class, () -> call.get(30, TimeUnit.SECONDS));
        TransportException t = assertInstanceOf(TransportException.class, e.getCause());
        assertEquals(TransportException.Delivery.MAY_HAVE_RUN, t.delivery());
        assertTrue(impl.spinSawCancel.await(30, TimeUnit.SECONDS));
    }

    @Test
    void aSlowCallDoesNotHoldUpTheAnswersOfCallsAfterIt() throws Exception {
        CompletableFuture<Long> slow = stub.spinAsync(new double[0], 600_000);
        assertTrue(impl.spinStarted.await(30, TimeUnit.SECONDS));
        for (int i = 0; i < 20; i++) {
            assertEquals(i, stub.echoDoubles(new double[] {i})[0]);   // same connection, answered first
        }
        assertTrue(!slow.isDone());
        slow.cancel(true);
        assertTrue(impl.spinSawCancel.await(30, TimeUnit.SECONDS));
    }

    @Test
    void aRequestOverTheFrameLimitIsRefusedBeforeAnythingIsSent() {
        WireBytes wire = new WireBytes();
        double[] big = new double[(TcpLimits.DEFAULT_MAX_FRAME_BYTES / 8) + 1];
        RefusedException e = assertThrows(RefusedException.class,
                () -> stub.withOptions(CallOptions.DEFAULT.withWireBytes(wire)).echoDoubles(big));
        assertEquals(WireFormatException.SIZE_LIMIT, e.reason());
        assertTrue(e.getMessage().contains("frame limit"), e.getMessage());
        assertEquals(-1, wire.sent(), "nothing was sent");
        double[] fits = new double[(TcpLimits.DEFAULT_MAX_FRAME_BYTES / 8) - 16];
        assertEquals(fits.length, stub.echoDoubles(fits).length, "just under the limit goes through");
    }

    /**
     * Large frames' arrays are kept and handed to the next large frame on both sides (a request's,
     * a server's read buffer, a client's answer buffer), holding the last frame's bytes: each
     * message of falling sizes, the smaller ones written over the larger ones' bytes, comes back
     * exactly and with its own length, over one connection.
     */
    @Test
    void largeMessagesOfFallingSizesEachComeBackExactlyOverTheArraysTheLargerOnesLeft() {
        java.util.Random random = new java.util.Random(43);
        int[] sizes = {(TcpLimits.DEFAULT_MAX_FRAME_BYTES / 8) - 16, 450_000, 420_000, 40_000, 33_000};
        for (int round = 0; round < 2; round++) {
            for (int size : sizes) {
                double[] values = new double[size];
                for (int i = 0; i < size; i++) {
                    values[i] = random.nextDouble() - 0.5;
                }
                values[size - 1] = -0.0;
                double[] back = stub.echoDoubles(values);
                assertEquals(size, back.length, "the message's own length, none of an earlier one's");
                assertTrue(java.util.Arrays.equals(values, back), "a message of " + size + " values came back exactly");
            }
        }
        assertEquals(1, ((TcpServer) server).acceptedConnections());
    }

    /**
     * Many large calls at once over one connection, blocking and not, of sizes that share kept
     * arrays: an array handed to two frames at once would mix their values.
     */
    @Test
    void concurrentLargeCallsEachGetTheirOwnValuesBack() throws Exception {
        ExecutorService pool = Executors.newFixedThreadPool(6);
        try {
            java.util.List<java.util.concurrent.Future<double[]>> blocking = new java.util.ArrayList<>();
            java.util.List<CompletableFuture<double[]>> async = new java.util.ArrayList<>();
            java.util.List<double[]> sent = new java.util.ArrayList<>();
            for (int i = 0; i < 24; i++) {
                double[] v = new double[40_000 + (i % 4) * 3_000];   // 320-392 KB: within a quarter of each other
                java.util.Arrays.fill(v, i + 0.5);
                v[v.length - 1] = -i;
                sent.add(v);
                if (i % 2 == 0) {
                    blocking.add(pool.submit(() -> stub.echoDoubles(v)));
                } else {
                    async.add(stub.echoDoublesAsync(v));
                }
            }
            for (int i = 0; i < 24; i++) {
                double[] back = i % 2 == 0 ? blocking.get(i / 2).get(60, TimeUnit.SECONDS)
                        : async.get(i / 2).get(60, TimeUnit.SECONDS);
                assertTrue(java.util.Arrays.equals(sent.get(i), back), "call " + i + " got its own values back");
            }
        } finally {
            pool.shutdownNow();
        }
    }

    @Test
    void anAnswerOverTheFrameLimitIsAnErrorNotAHang() {
        try (ProtocolServer small = new TcpProtocolProvider(TcpLimits.defaults().withMaxFrameBytes(1 << 20))
                .newServer(ServerSettings.defaults())) {
            ConformanceImpl other = new ConformanceImpl();
            Endpoint at = small.export(ConformanceComponent.skeleton(other));
            ConformanceStub s = ConformanceComponent.stub(client.connect(ConformanceComponent.DESCRIPTOR, at));
            // the client's own limit is 4 MiB, the server's 1 MiB: the server refuses the request
            RefusedException e = assertThrows(RefusedException.class, () -> s.echoDoubles(new double[200_000]));
            assertEquals(WireFormatException.SIZE_LIMIT, e.reason());
            s.ping();
            assertEquals(2, ((TcpServer) small).acceptedConnections(), "the next call went on a new connection");
        }
    }

    @Test
    void aRequestOverALimitOnceReadIsRefusedAndItsConnectionStaysInUse() {
        // the message limit, below the frame limit: the frame is read whole and its message refused
        TcpServer limited = (TcpServer) provider.newServer(ServerSettings.defaults().withMaxMessageBytes(1000));
        try (limited) {
            Endpoint at = limited.export(ConformanceComponent.skeleton(new ConformanceImpl()));
            ConformanceStub s = ConformanceComponent.stub(client.connect(ConformanceComponent.DESCRIPTOR, at));
            s.ping();
            RefusedException e = assertThrows(RefusedException.class, () -> s.echoDoubles(new double[1000]));
            assertEquals(WireFormatException.SIZE_LIMIT, e.reason());
            s.ping();
            assertEquals(1, limited.acceptedConnections(), "ELIMIT without sb-closing: no second connection was opened");
        }
    }

    @Test
    void aLargeRequestToAServerThatStopsReadingFailsByItsDeadline() throws Exception {
        java.util.concurrent.atomic.AtomicReference<java.net.Socket> accepted = new java.util.concurrent.atomic.AtomicReference<>();
        try (java.net.ServerSocket silent = new java.net.ServerSocket(0);
             ProtocolClient big = new TcpProtocolProvider(TcpLimits.defaults().withMaxFrameBytes(64 << 20))
                     .newClient(ClientSettings.defaults())) {
            Thread acceptor = new Thread(() -> {
                try {
                    accepted.set(silent.accept());   // and never reads
                } catch (java.io.IOException e) {
                    // closed
                }
            });
            acceptor.setDaemon(true);
            acceptor.start();
            ConformanceStub s = ConformanceComponent.stub(big.connect(ConformanceComponent.DESCRIPTOR,
                    new Endpoint("tcp", "tcp://127.0.0.1:" + silent.getLocalPort() + "/Conformance")))
                    .withOptions(CallOptions.DEFAULT.withTimeout(Duration.ofMillis(500)));
            // 32 MB: more than the sockets' buffers hold, so the write blocks once the peer stops reading
            CompletableFuture<Throwable> call = CompletableFuture.supplyAsync(() -> {
                try {
                    s.echoDoubles(new double[4 << 20]);
                    return null;
                } catch (RuntimeException e) {
                    return e;
                }
            });
            Throwable e = call.get(20, TimeUnit.SECONDS);   // a write without a watch blocks until the peer goes
            assertInstanceOf(TransportException.class, e);
        } finally {
            java.net.Socket peer = accepted.get();
            if (peer != null) {
                peer.close();
            }
        }
    }

    @Test
    void wireBytesCountWholeFrames() {
        WireBytes wire = new WireBytes();
        stub.withOptions(CallOptions.DEFAULT.withWireBytes(wire)).echoDoubles(new double[100]);
        assertTrue(wire.sent() > 800 + Frame.HEADER_BYTES && wire.sent() < 900, "sent " + wire.sent());
        assertTrue(wire.received() > 800 + Frame.HEADER_BYTES && wire.received() < 900, "received " + wire.received());
    }

    @Test
    void aBusyServerRefusesACallBeforeItRuns() throws Exception {
        try (ProtocolServer one = provider.newServer(ServerSettings.defaults().withMaxConcurrentCalls(1))) {
            ConformanceImpl other = new ConformanceImpl();
            Endpoint at = one.export(ConformanceComponent.skeleton(other));
            ConformanceStub s = ConformanceComponent.stub(client.connect(ConformanceComponent.DESCRIPTOR, at));
            CompletableFuture<Long> running = s.spinAsync(new double[0], 600_000);
            assertTrue(other.spinStarted.await(30, TimeUnit.SECONDS));
            long before = other.increments.get();
            TransportException e = assertThrows(TransportException.class, () -> s.increment(1));
            assertEquals(TransportException.Delivery.NOT_DELIVERED, e.delivery(), e.getMessage());
            assertEquals(before, other.increments.get(), "the refused call did not run");
            running.cancel(true);
            assertTrue(other.spinSawCancel.await(30, TimeUnit.SECONDS));
        }
    }

    @Test
    void callsSentBeforeTheConnectionIsUpAllGetThrough() throws Exception {
        try (ProtocolClient fresh = provider.newClient(ClientSettings.defaults())) {
            ConformanceStub s = ConformanceComponent.stub(fresh.connect(ConformanceComponent.DESCRIPTOR,
                    transport.endpoint()));
            CountDownLatch all = new CountDownLatch(50);
            for (int i = 0; i < 50; i++) {
                s.echoDoublesAsync(new double[] {i}).thenRun(all::countDown);
            }
            assertTrue(all.await(30, TimeUnit.SECONDS));
        }
    }
}
