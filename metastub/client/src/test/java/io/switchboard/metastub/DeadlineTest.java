package io.switchboard.metastub;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.switchboard.protocol.CallOptions;
import io.switchboard.protocol.DeadlineExceededException;
import io.switchboard.protocol.Endpoint;
import io.switchboard.protocol.ServerSettings;
import io.switchboard.protocol.Skeleton;
import io.switchboard.protocol.TransportException;
import io.switchboard.protocol.spi.DeduplicatingSkeleton;
import io.switchboard.protocol.spi.ProtocolServer;
import io.switchboard.protocol.spi.Protocols;
import io.switchboard.testing.CountingSkeleton;
import io.switchboard.testing.conformance.ConformanceComponent;
import io.switchboard.testing.conformance.ConformanceImpl;
import io.switchboard.testing.conformance.ConformanceStub;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * The whole call's deadline against real servers: a gRPC server that runs {@code increment} and
 * then holds its answer back, and a SOAP server that would answer at once. Without a deadline the
 * failsafe falls back to SOAP after the gRPC attempt's timeout (each attempt has the full timeout);
 * with a deadline the gRPC attempt gets only the time left and no fallback starts after it.
 */
class DeadlineTest {
    private final ConformanceImpl impl = new ConformanceImpl();
    private final Map<String, AtomicInteger> served = new ConcurrentHashMap<>();
    /** Holds every gRPC answer back until the test ends. */
    private final CountDownLatch release = new CountDownLatch(1);
    /** Whether the gRPC server holds its answers back (from after the warm-up on). */
    private volatile boolean slow;
    private final List<AutoCloseable> closing = new ArrayList<>();
    private ConformanceStub stub;

    @BeforeEach
    void start() {
        // one server's call ids on both protocols: a repeat over SOAP gets the gRPC run's result
        Skeleton skeleton = new DeduplicatingSkeleton(ConformanceComponent.skeleton(impl), 1 << 20, Duration.ofMinutes(1));
        Endpoint grpc = export("grpc", skeleton);
        Endpoint soap = export("soap", skeleton);
        // the server recognises call ids: a gRPC call that may have run may be repeated over SOAP
        MetaStub channel = MetaStub.builder(ConformanceComponent.DESCRIPTOR).protocols("grpc", "soap")
                .endpoints(List.of(grpc, soap)).policy(new FixedPolicy("grpc")).serverRecognisesCallIds(true).build();
        closing.add(channel);
        stub = ConformanceComponent.stub(channel);
        stub.ping();   // the gRPC connection is up: the deadline below is spent on the call, not on connecting
        served.clear();
        slow = true;
    }

    @AfterEach
    void stop() throws Exception {
        release.countDown();
        for (int i = closing.size() - 1; i >= 0; i--) {
            closing.get(i).close();
        }
    }

    private Endpoint export(String protocol, Skeleton skeleton) {
        ProtocolServer s = Protocols.get(protocol).newServer(ServerSettings.defaults());
        closing.add(s);
        return s.export(new CountingSkeleton(skeleton, protocol, served, label -> {
            if (slow && label.equals("grpc")) {
                try {
                    release.await(30, TimeUnit.SECONDS);   // a slow component: the answer comes late
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                }
            }
        }));
    }

    private int served(String protocol) {
        AtomicInteger n = served.get(protocol);
        return n == null ? 0 : n.get();
    }

    @Test
    void withoutADeadlineTheFallbackGetsItsOwnTimeout() {
        long total = stub.withOptions(CallOptions.DEFAULT.withTimeout(Duration.ofMillis(300))).increment(5);
        assertEquals(5, total, "the SOAP fallback answered (the server ran the call id once)");
        assertEquals(1, impl.increments.get());
        assertEquals(1, served("grpc"));
        assertEquals(1, served("soap"));
    }

    @Test
    void noFallbackStartsAfterTheDeadline() {
        CallOptions options = CallOptions.DEFAULT.withTimeout(Duration.ofSeconds(20)).withDeadlineAfter(Duration.ofMillis(300));
        long started = System.nanoTime();
        DeadlineExceededException e = assertThrows(DeadlineExceededException.class,
                () -> stub.withOptions(options).increment(5));
        long tookMillis = (System.nanoTime() - started) / 1_000_000;
        // The limit is the behaviour: the attempt gets the 300 ms left, not its own 20 s timeout;
        // 10 s lies between the two, with 9.7 s of margin for a loaded machine.
        assertTrue(tookMillis < 10_000, "the gRPC attempt got the 300 ms left, not its 20 s: " + tookMillis + " ms");
        assertEquals(TransportException.Delivery.MAY_HAVE_RUN, e.delivery(), "the gRPC server ran it");
        assertTrue(e.getMessage().contains("fallback over soap"), e.getMessage());
        assertEquals(1, served("grpc"));
        assertEquals(0, served("soap"), "no fallback after the deadline");
    }

    @Test
    void anAsynchronousCallStopsAtTheDeadlineToo() {
        CompletableFuture<Long> f = stub.withOptions(CallOptions.DEFAULT.withTimeout(Duration.ofSeconds(20))
                .withDeadlineAfter(Duration.ofMillis(300))).incrementAsync(5);
        Throwable failure = assertThrows(Exception.class, () -> f.get(10, TimeUnit.SECONDS));
        assertInstanceOf(DeadlineExceededException.class, failure.getCause(), failure.toString());
        assertEquals(1, served("grpc"));
        assertEquals(0, served("soap"));
    }
}
