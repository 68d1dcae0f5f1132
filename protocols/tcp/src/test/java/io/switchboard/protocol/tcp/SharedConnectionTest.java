package io.switchboard.protocol.tcp;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.switchboard.protocol.CallOptions;
import io.switchboard.protocol.ClientSettings;
import io.switchboard.protocol.Endpoint;
import io.switchboard.protocol.ServerSettings;
import io.switchboard.protocol.TransportException;
import io.switchboard.protocol.spi.ProtocolClient;
import io.switchboard.protocol.spi.ProtocolServer;
import io.switchboard.testing.conformance.ConformanceComponent;
import io.switchboard.testing.conformance.ConformanceImpl;
import io.switchboard.testing.conformance.ConformanceStub;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * Many callers on one connection, blocking and not, fast and slow, some giving up: whoever reads
 * the connection hands every answer to its call, reading passes from caller to caller as they
 * leave, and no call waits for an answer that already arrived.
 */
class SharedConnectionTest {
    private final TcpProtocolProvider provider = new TcpProtocolProvider();
    private ConformanceImpl impl;
    private ProtocolServer server;
    private ProtocolClient client;
    private ConformanceStub stub;

    @BeforeEach
    void start() {
        impl = new ConformanceImpl();
        impl.spinStarted = new java.util.concurrent.CountDownLatch(0);
        server = provider.newServer(ServerSettings.defaults());
        Endpoint at = server.export(ConformanceComponent.skeleton(impl));
        client = provider.newClient(ClientSettings.defaults());
        stub = ConformanceComponent.stub(client.connect(ConformanceComponent.DESCRIPTOR, at));
    }

    @AfterEach
    void stop() {
        client.close();
        server.close();
    }

    @Test
    void blockingAndNonBlockingCallersShareOneConnection() throws Exception {
        ExecutorService pool = Executors.newFixedThreadPool(12);
        try {
            List<Future<Integer>> workers = new ArrayList<>();
            for (int w = 0; w < 12; w++) {
                int id = w;
                workers.add(pool.submit(() -> {
                    ThreadLocalRandom r = ThreadLocalRandom.current();
                    int done = 0;
                    for (int i = 0; i < 150; i++) {
                        double[] v = new double[r.nextInt(0, 2000)];
                        java.util.Arrays.fill(v, id * 1000 + i);
                        switch (r.nextInt(4)) {
                            case 0 -> {
                                CompletableFuture<double[]> f = stub.echoDoublesAsync(v);
                                assertEquals(v.length, f.get(30, TimeUnit.SECONDS).length);
                            }
                            case 1 -> {
                                int rounds = r.nextInt(1, 4);   // a few ms on the server
                                assertEquals(rounds, stub.spin(new double[0], rounds));
                            }
                            default -> {
                                double[] back = stub.echoDoubles(v);
                                assertEquals(v.length, back.length);
                                if (back.length > 0) {
                                    assertEquals(id * 1000 + i, back[back.length - 1]);
                                }
                            }
                        }
                        done++;
                    }
                    return done;
                }));
            }
            for (Future<Integer> f : workers) {
                assertEquals(150, f.get(120, TimeUnit.SECONDS));
            }
        } finally {
            pool.shutdownNow();
        }
    }

    @Test
    void aCallerWaitingWhileAnotherReadsGetsItsAnswerAndReadsOnWhenTheReaderGivesUp() throws Exception {
        ConformanceStub hurried = stub.withOptions(CallOptions.DEFAULT.withTimeout(Duration.ofMillis(400)));
        impl.spinStarted = new java.util.concurrent.CountDownLatch(1);
        CompletableFuture<Throwable> slow = CompletableFuture.supplyAsync(() -> {
            try {
                hurried.spin(new double[0], 600_000);   // leads, and gives up after 400 ms
                return null;
            } catch (TransportException e) {
                return e;
            }
        });
        assertTrue(impl.spinStarted.await(30, TimeUnit.SECONDS));   // the first caller is reading the connection
        // a second caller, with a call slower than the first one's timeout: it must read on by itself
        long rounds = stub.withOptions(CallOptions.DEFAULT.withTimeout(Duration.ofSeconds(20))).spin(new double[0], 700);
        assertEquals(700, rounds);
        Throwable e = slow.get(30, TimeUnit.SECONDS);
        assertTrue(e instanceof TransportException t && t.delivery() == TransportException.Delivery.MAY_HAVE_RUN, String.valueOf(e));
        for (int i = 0; i < 10; i++) {
            stub.ping();
        }
    }

    @Test
    void nonBlockingCallsAloneAreAnswered() throws Exception {
        List<CompletableFuture<Long>> calls = new ArrayList<>();
        for (int i = 0; i < 40; i++) {
            calls.add(stub.spinAsync(new double[0], 1 + i % 5));
        }
        for (int i = 0; i < 40; i++) {
            assertEquals(1 + i % 5, calls.get(i).get(30, TimeUnit.SECONDS));
        }
        CompletableFuture<Long> late = stub.spinAsync(new double[0], 3);   // after the reader task left
        assertEquals(3, late.get(30, TimeUnit.SECONDS));
    }

    @Test
    void aClosedClientRefusesNewCallsAsNotDelivered() {
        stub.ping();
        client.close();
        TransportException e = assertThrows(TransportException.class, stub::ping);
        assertEquals(TransportException.Delivery.NOT_DELIVERED, e.delivery());
    }
}
