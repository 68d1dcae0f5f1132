package io.switchboard.server;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.switchboard.client.ReplicatedChannel;
import io.switchboard.metastub.MetaStub;
import io.switchboard.protocol.CallOptions;
import io.switchboard.protocol.DrainingException;
import io.switchboard.protocol.TransportException;
import io.switchboard.registry.ComponentEntry;
import io.switchboard.testing.conformance.ConformanceComponent;
import io.switchboard.testing.conformance.ConformanceImpl;
import io.switchboard.testing.conformance.ConformanceStub;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * A component server that closes drains: new calls are refused as draining (not delivered, on
 * every protocol), the call under way runs to its end and is answered, and only then do the
 * listeners stop; a client with another replica moves its calls there, without a SOAP fallback
 * on the draining one.
 */
class DrainTest {
    private final List<AutoCloseable> closing = new ArrayList<>();

    /** {@code increment} waits for {@link #release} once {@link #hold} is set: a call under way while the server closes. */
    static final class Held extends ConformanceImpl {
        volatile boolean hold;
        final CountDownLatch entered = new CountDownLatch(1);
        final CountDownLatch release = new CountDownLatch(1);

        @Override
        public long increment(int by) {
            if (hold) {
                entered.countDown();
                try {
                    release.await(30, TimeUnit.SECONDS);
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                }
            }
            return super.increment(by);
        }
    }

    @AfterEach
    void stop() throws Exception {
        for (int i = closing.size() - 1; i >= 0; i--) {
            closing.get(i).close();
        }
    }

    private MetaStub metaStub(ComponentEntry entry) {
        MetaStub m = MetaStub.builder(ConformanceComponent.DESCRIPTOR).endpoints(entry.endpoints())
                .serverRecognisesCallIds(true).build();
        closing.add(m);
        return m;
    }

    private static ConformanceStub pinned(MetaStub channel, String protocol) {
        return ConformanceComponent.stub(channel).withOptions(CallOptions.DEFAULT.with(MetaStub.PROTOCOL, protocol));
    }

    /** Pings until the server answers "draining" (it starts to once its close has begun); that answer. */
    private static DrainingException awaitDraining(ConformanceStub stub) {
        long end = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
        while (System.nanoTime() - end < 0) {
            try {
                stub.ping();
            } catch (DrainingException e) {
                return e;
            }
        }
        throw new AssertionError("the server never answered draining");
    }

    @Test
    void aClosingServerRefusesNewCallsOnEveryProtocolAndFinishesTheOneUnderWay() throws Exception {
        Held impl = new Held();
        ComponentServer server = ComponentServer.builder().drain(Duration.ZERO, Duration.ofSeconds(30)).build();
        ComponentEntry entry = server.export("Counter", ConformanceComponent.skeleton(impl));
        MetaStub channel = metaStub(entry);
        impl.hold = true;
        CompletableFuture<Long> underWay = pinned(channel, "grpc").incrementAsync(1);
        assertTrue(impl.entered.await(10, TimeUnit.SECONDS), "the call is under way");
        CompletableFuture<ComponentServer.Drained> drained = new CompletableFuture<>();
        Thread closer = new Thread(() -> drained.complete(server.drainAndClose()), "closer");
        closer.start();
        for (String protocol : List.of("grpc", "soap", "tcp", "local")) {
            DrainingException e = awaitDraining(pinned(channel, protocol));
            assertEquals(TransportException.Delivery.NOT_DELIVERED, e.delivery(), protocol + ": " + e);
            assertEquals(protocol, e.protocol(), e.getMessage());
        }
        assertTrue(closer.isAlive(), "close waits for the call under way");
        impl.release.countDown();
        assertEquals(1, underWay.get(10, TimeUnit.SECONDS), "the call under way is answered");
        closer.join(TimeUnit.SECONDS.toMillis(10));
        assertFalse(closer.isAlive(), "close returns once the call under way has ended");
        assertEquals(1, impl.increments.get());
        ComponentServer.Drained report = drained.get(10, TimeUnit.SECONDS);
        assertEquals(1, report.underWay(), report.toString());
        assertEquals(0, report.cut(), report.toString());
        assertTrue(report.refused() >= 4, "one refusal per protocol at least: " + report);
        assertEquals(null, server.drainAndClose(), "the first close reports; a second has nothing to do");
    }

    /** A call still running when the drain timeout passes is cut, and the report says so. */
    @Test
    void aCallLongerThanTheDrainTimeoutIsReportedCut() throws Exception {
        Held impl = new Held();
        ComponentServer server = ComponentServer.builder().drain(Duration.ZERO, Duration.ofMillis(100)).build();
        ComponentEntry entry = server.export("Counter", ConformanceComponent.skeleton(impl));
        impl.hold = true;
        CompletableFuture<Long> underWay = pinned(metaStub(entry), "grpc").incrementAsync(1);
        assertTrue(impl.entered.await(10, TimeUnit.SECONDS), "the call is under way");
        ComponentServer.Drained report = server.drainAndClose();
        impl.release.countDown();
        assertEquals(1, report.underWay(), report.toString());
        assertEquals(1, report.cut(), report.toString());
        assertTrue(report.toString().contains("1 cut"), report.toString());
        assertThrows(java.util.concurrent.ExecutionException.class, () -> underWay.get(10, TimeUnit.SECONDS));
    }

    @Test
    void callsMoveToAnotherReplicaWithoutASoapFallbackOnTheDrainingOne() throws Exception {
        Held draining = new Held();
        ConformanceImpl other = new ConformanceImpl();
        ComponentServer first = ComponentServer.builder().drain(Duration.ZERO, Duration.ofSeconds(30)).build();
        ComponentServer second = ComponentServer.builder().build();
        closing.add(second);
        ComponentEntry a = first.export("Counter", ConformanceComponent.skeleton(draining));
        ComponentEntry b = second.export("Counter", ConformanceComponent.skeleton(other));
        ReplicatedChannel replicas = new ReplicatedChannel("Counter", List.of(a, b), this::metaStub,
                ReplicatedChannel.Choice.IN_ORDER, Duration.ofSeconds(5));
        closing.add(replicas);
        ConformanceStub stub = ConformanceComponent.stub(replicas);   // the policy's choice, the failsafe on
        draining.hold = true;
        CompletableFuture<Long> underWay = stub.incrementAsync(1);   // in order: the first replica
        assertTrue(draining.entered.await(10, TimeUnit.SECONDS));
        Thread closer = new Thread(first::close, "closer");
        closer.start();
        awaitDraining(pinned(metaStub(a), "grpc"));
        for (int i = 0; i < 5; i++) {
            assertEquals(i + 1, stub.increment(1), "answered by the other replica");
        }
        assertEquals(5, other.increments.get());
        assertEquals(0, draining.increments.get(), "no call ran on the draining replica, over any protocol");
        draining.release.countDown();
        assertEquals(1, underWay.get(10, TimeUnit.SECONDS));
        closer.join(TimeUnit.SECONDS.toMillis(10));
        assertFalse(closer.isAlive());
    }
}
