package io.switchboard.metastub;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.switchboard.protocol.CallOptions;
import io.switchboard.protocol.ClientSettings;
import io.switchboard.protocol.spi.DeduplicatingSkeleton;
import io.switchboard.protocol.Endpoint;
import io.switchboard.protocol.spi.ProtocolServer;
import io.switchboard.protocol.spi.Protocols;
import io.switchboard.protocol.ServerSettings;
import io.switchboard.protocol.Skeleton;
import io.switchboard.testing.UnusedPorts;
import io.switchboard.testing.conformance.ConformanceComponent;
import io.switchboard.testing.conformance.ConformanceImpl;
import io.switchboard.testing.conformance.ConformanceStub;
import io.switchboard.testing.conformance.LinkEntry;
import io.switchboard.testing.conformance.Values;
import io.switchboard.testing.CountingSkeleton;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CancellationException;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * The meta-stub's non-blocking form over real SOAP and gRPC servers on loopback: many calls in
 * flight on one meta-stub, each checked exactly and matched with its call record; cancellation
 * that reaches the server's work over gRPC; the failsafe on the async path; one-way calls.
 */
class AsyncMetaStubTest {
    private final ConformanceImpl impl = new ConformanceImpl();
    private final Map<String, AtomicInteger> served = new ConcurrentHashMap<>();
    private final List<CallRecord> records = new CopyOnWriteArrayList<>();
    private final List<ProtocolServer> servers = new ArrayList<>();
    private final List<MetaStub> channels = new ArrayList<>();

    @AfterEach
    void stop() {
        channels.forEach(MetaStub::close);
        servers.forEach(ProtocolServer::close);
    }

    private Endpoint export(String protocol, Skeleton skeleton) {
        ProtocolServer s = Protocols.get(protocol).newServer(ServerSettings.defaults());
        servers.add(s);
        return s.export(new CountingSkeleton(skeleton, protocol, served, label -> { }));
    }

    private List<Endpoint> grpcAndSoap() {
        Skeleton once = new DeduplicatingSkeleton(ConformanceComponent.skeleton(impl), 1 << 20, Duration.ofMinutes(5));
        return List.of(export("grpc", once), export("soap", once));
    }

    private ConformanceStub client(List<Endpoint> endpoints, SelectionPolicy policy) {
        return client(endpoints, policy, ClientSettings.defaults());
    }

    private ConformanceStub client(List<Endpoint> endpoints, SelectionPolicy policy, ClientSettings settings) {
        MetaStub channel = MetaStub.builder(ConformanceComponent.DESCRIPTOR).protocols("grpc", "soap").settings(settings)
                .endpoints(endpoints).policy(policy).serverRecognisesCallIds(true).listener(records::add).build();
        channels.add(channel);
        return ConformanceComponent.stub(channel);
    }

    private int served(String protocol) {
        AtomicInteger n = served.get(protocol);
        return n == null ? 0 : n.get();
    }

    private List<CallRecord> recordsOf(String callId) {
        return records.stream().filter(r -> callId.equals(r.callId())).toList();
    }

    /** The values call {@code i} sends: distinct per call and position, with edge values in some. */
    private static double[] doubles(int i, int n) {
        double[] v = new double[n];
        for (int j = 0; j < n; j++) {
            v[j] = i * 1_000_003.0 + j * 0.001;
        }
        if (n > 3 && i % 3 == 0) {
            v[0] = Double.NaN;
            v[1] = -0.0;
            v[2] = Double.NEGATIVE_INFINITY;
        }
        return v;
    }

    @Test
    void thousandConcurrentAsyncCallsOnOneMetaStubAreExactAndEachRecordedOnThePolicysProtocol() throws Exception {
        ConformanceStub stub = client(grpcAndSoap(), new SizePolicy());
        int calls = 1000;
        List<CompletableFuture<?>> futures = new ArrayList<>();
        List<Object> sent = new ArrayList<>();
        List<String> expectedProtocol = new ArrayList<>();
        for (int i = 0; i < calls; i++) {
            ConformanceStub withId = stub.withOptions(CallOptions.DEFAULT.withCallId("async-" + i));
            switch (i % 4) {
                case 0 -> {     // 160 KB: far above the size policy's 800 bytes
                    double[] v = doubles(i, 20_000);
                    sent.add(v.clone());
                    futures.add(withId.echoDoublesAsync(v));
                    expectedProtocol.add("grpc");
                }
                case 1 -> {     // at most 20 doubles: a SOAP call
                    double[] v = doubles(i, i % 21);
                    sent.add(v.clone());
                    futures.add(withId.echoDoublesAsync(v));
                    expectedProtocol.add("soap");
                }
                case 2 -> {     // a 2,000-node list
                    LinkEntry head = Values.list(2_000 + i);
                    sent.add(Values.list(2_000 + i));
                    futures.add(withId.echoListAsync(head));
                    expectedProtocol.add("grpc");
                }
                default -> {    // a 2-node list
                    sent.add(Values.list(2));
                    futures.add(withId.echoListAsync(Values.list(2)));
                    expectedProtocol.add("soap");
                }
            }
        }
        CompletableFuture.allOf(futures.toArray(CompletableFuture[]::new)).get(10, TimeUnit.MINUTES);

        for (int i = 0; i < calls; i++) {
            Object back = futures.get(i).get();
            if (sent.get(i) instanceof double[] v) {
                Values.assertSameDoubles(v, (double[]) back);
            } else {
                Values.assertSameList((LinkEntry) sent.get(i), (LinkEntry) back);
            }
            List<CallRecord> mine = recordsOf("async-" + i);
            assertEquals(1, mine.size(), "one record for call " + i + ": " + mine);
            CallRecord r = mine.get(0);
            assertEquals(expectedProtocol.get(i), r.protocol(), "call " + i + " (" + r.reason() + ")");
            assertTrue(r.succeeded(), r.toString());
            assertTrue(r.reason().startsWith("size (stub policy"), r.reason());
        }
        assertEquals(calls, records.size());
        assertEquals(calls / 2, served("grpc"));
        assertEquals(calls / 2, served("soap"));
    }

    @Test
    void cancellingAnAsyncBulkCallOverGrpcStopsTheServersWork() throws Exception {
        // a deadline far beyond the test's wait: only the cancel can reach the server in time
        ConformanceStub stub = client(grpcAndSoap(), new SizePolicy(),
                ClientSettings.defaults().withCallTimeout(Duration.ofMinutes(30)));
        ConformanceStub withId = stub.withOptions(CallOptions.DEFAULT.withCallId("spin-1"));
        CompletableFuture<Long> spin = withId.spinAsync(new double[100_000], Integer.MAX_VALUE);
        assertTrue(impl.spinStarted.await(2, TimeUnit.MINUTES), "the server never started the work");

        assertTrue(spin.cancel(true));
        assertThrows(CancellationException.class, spin::join);
        assertTrue(impl.spinSawCancel.await(2, TimeUnit.MINUTES), "the server's loop never saw the cancellation");
        long roundsWhenStopped = impl.spinRounds.get();

        // a later call on the same connection: the stopped loop has not advanced meanwhile
        Values.assertSameDoubles(new double[5_000], stub.echoDoubles(new double[5_000]));
        assertEquals(roundsWhenStopped, impl.spinRounds.get(), "the cancelled work went on");

        List<CallRecord> mine = recordsOf("spin-1");
        assertEquals(1, mine.size(), "a cancelled call falls back nowhere: " + mine);
        assertEquals("grpc", mine.get(0).protocol());
        assertFalse(mine.get(0).succeeded());
        assertTrue(mine.get(0).error().startsWith("CancellationException"), mine.get(0).error());
        assertEquals(0, served("soap"));
    }

    @Test
    void asyncCallFallsBackToSoapWhenGrpcRefusesTheConnection() throws Exception {
        int deadPort = UnusedPorts.port();
        Endpoint dead = new Endpoint("grpc", "grpc://127.0.0.1:" + deadPort + "/Conformance");
        ConformanceStub stub = client(List.of(dead, grpcAndSoap().get(1)), new FixedPolicy("grpc"));
        long before = impl.increments.get();
        long total = stub.withOptions(CallOptions.DEFAULT.withCallId("fallback-1")).incrementAsync(7)
                .get(2, TimeUnit.MINUTES);
        assertEquals(7, total);
        assertEquals(before + 1, impl.increments.get(), "ran exactly once");
        List<CallRecord> mine = recordsOf("fallback-1");
        assertEquals(List.of("grpc", "soap"), mine.stream().map(CallRecord::protocol).toList());
        assertFalse(mine.get(0).succeeded());
        assertTrue(mine.get(1).fallback(), mine.get(1).reason());
        assertTrue(mine.get(1).succeeded());
    }

    @Test
    void oneWayCallsThroughTheMetaStubRunOnceOnEachProtocol() throws Exception {
        ConformanceStub stub = client(grpcAndSoap(), new SizePolicy());
        for (String protocol : List.of("soap", "grpc")) {
            ConformanceStub pinned = stub.withOptions(CallOptions.DEFAULT.with(MetaStub.PROTOCOL, protocol));
            String blocking = "one-way-" + protocol;
            impl.delivered = new CountDownLatch(1);
            pinned.deliver(blocking);
            assertTrue(impl.delivered.await(2, TimeUnit.MINUTES), blocking + " never ran");
            String async = "one-way-async-" + protocol;
            impl.delivered = new CountDownLatch(1);
            assertNull(pinned.deliverAsync(async).get(2, TimeUnit.MINUTES));
            assertTrue(impl.delivered.await(2, TimeUnit.MINUTES), async + " never ran");
            stub.ping();
            assertEquals(1, impl.deliveries.get(blocking).get(), blocking);
            assertEquals(1, impl.deliveries.get(async).get(), async);
        }
        assertEquals(List.of("soap", "soap", "soap", "grpc", "grpc", "soap"),
                records.stream().map(CallRecord::protocol).toList());
        assertEquals(2, served("grpc"));
    }
}
