package io.switchboard.client;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.switchboard.client.ReplicaFailoverInterceptor.ReplicaCall;
import io.switchboard.metastub.ClientInterceptor;
import io.switchboard.metastub.MetaStub;
import io.switchboard.protocol.AsyncCalls;
import io.switchboard.protocol.CallOptions;
import io.switchboard.protocol.Endpoint;
import io.switchboard.protocol.TransportException;
import io.switchboard.protocol.TransportException.Delivery;
import io.switchboard.registry.ComponentEntry;
import io.switchboard.testing.conformance.ConformanceComponent;
import io.switchboard.testing.conformance.DivideFault;
import io.switchboard.testing.conformance.DivideFaultException;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/** Replica failover alone: replicas picked in order, a scripted outcome per replica, no network. */
class ReplicaFailoverInterceptorTest {
    private final List<Replica> replicas = new ArrayList<>();
    private final List<String> tried = new ArrayList<>();

    @AfterEach
    void close() {
        replicas.forEach(Replica::retire);
    }

    private Replica replica(String id) {
        ComponentEntry entry = new ComponentEntry("Conformance", id,
                List.of(new Endpoint("soap", "http://127.0.0.1:1/services/Conformance")), null, null, Instant.EPOCH);
        Replica r = new Replica(entry, MetaStub.builder(ConformanceComponent.DESCRIPTOR).protocols("soap")
                .endpoints(entry.endpoints()).build());
        replicas.add(r);
        return r;
    }

    /** Picks the first replica not tried, in order, as {@code Choice.IN_ORDER} does. */
    private final ReplicaFailoverInterceptor.Replicas inOrder = new ReplicaFailoverInterceptor.Replicas() {
        @Override
        public Replica pick(Set<Replica> done) {
            return replicas.stream().filter(r -> !done.contains(r)).findFirst().orElse(null);
        }

        @Override
        public Replica await() {
            throw new Switchboard.NotBoundException("no instance of Conformance is bound");
        }
    };

    /** The next step: each replica answers with its scripted outcome (a value, a Throwable or a future). */
    private ClientInterceptor.Chain answering(Map<String, Object> outcomes) {
        return call -> {
            Replica r = ((ReplicaCall) call).replica;
            tried.add(r.entry.instanceId());
            assertEquals(1, r.inFlight.get(), "the attempt is counted in flight on its replica");
            Object o = outcomes.get(r.entry.instanceId());
            if (o instanceof CompletableFuture<?> f) {
                @SuppressWarnings("unchecked")
                CompletableFuture<Object> later = (CompletableFuture<Object>) f;
                return later;
            }
            return o instanceof Throwable t ? CompletableFuture.failedFuture(t) : CompletableFuture.completedFuture(o);
        };
    }

    private static ReplicaCall call(String operation, CompletableFuture<Object> caller) {
        return new ReplicaCall("Conformance", ConformanceComponent.DESCRIPTOR.operation(operation), null,
                CallOptions.DEFAULT, caller);
    }

    private static TransportException failure(Delivery delivery) {
        return new TransportException("soap", delivery, "injected", null);
    }

    @Test
    void aFailureNotDeliveredMovesToTheNextReplicaWhichIsAvoidedNoMore() {
        Replica a = replica("a");
        Replica b = replica("b");
        ReplicaFailoverInterceptor failover = new ReplicaFailoverInterceptor(inOrder, t -> false);
        ReplicaCall call = call("increment", null);
        Object back = failover.intercept(call, answering(Map.of("a", failure(Delivery.NOT_DELIVERED), "b", "from b")))
                .join();
        assertEquals("from b", back);
        assertEquals(List.of("a", "b"), tried);
        assertEquals(1, call.attempt());
        long now = System.nanoTime();
        assertTrue(a.avoided(now), "the failed replica backs off");
        assertFalse(b.avoided(now));
        assertEquals(0, a.inFlight.get());
        assertEquals(0, b.inFlight.get());
    }

    @Test
    void aCallThatMayHaveRunMovesOnlyIfIdempotent() {
        replica("a");
        replica("b");
        ReplicaFailoverInterceptor failover = new ReplicaFailoverInterceptor(inOrder, t -> false);
        Map<String, Object> outcomes = Map.of("a", failure(Delivery.MAY_HAVE_RUN), "b", "from b");
        TransportException e = (TransportException) assertThrows(TransportException.class,
                () -> AsyncCalls.await(failover.intercept(call("increment", null), answering(outcomes))));
        assertEquals(Delivery.MAY_HAVE_RUN, e.delivery());
        assertEquals(List.of("a"), tried, "a server that knows call ids does not make it repeatable on another replica");
        assertEquals("from b", failover.intercept(call("ping", null), answering(outcomes)).join());
    }

    @Test
    void whenEveryReplicaFailedTheCallerGetsTheLastFailure() {
        replica("a");
        replica("b");
        TransportException last = failure(Delivery.NOT_DELIVERED);
        ReplicaFailoverInterceptor failover = new ReplicaFailoverInterceptor(inOrder, t -> false);
        CompletableFuture<Object> f = failover.intercept(call("ping", null),
                answering(Map.of("a", failure(Delivery.NOT_DELIVERED), "b", last)));
        assertSame(last, assertThrows(TransportException.class, () -> AsyncCalls.await(f)));
        assertEquals(List.of("a", "b"), tried);
    }

    @Test
    void anAnswerIsNotRepeatedUnlessItSaysNotDoneHere() {
        Replica a = replica("a");
        replica("b");
        DivideFaultException fault = new DivideFaultException(new DivideFault());
        Map<String, Object> outcomes = Map.of("a", fault, "b", "from b");
        assertSame(fault, assertThrows(DivideFaultException.class, () -> AsyncCalls.await(
                new ReplicaFailoverInterceptor(inOrder, t -> false).intercept(call("divide", null), answering(outcomes)))));
        assertFalse(a.avoided(System.nanoTime()), "an answer says nothing against the replica");
        assertEquals("from b", new ReplicaFailoverInterceptor(inOrder, t -> t == fault)
                .intercept(call("divide", null), answering(outcomes)).join());
        assertTrue(a.avoided(System.nanoTime()));
    }

    @Test
    void withNoReplicaBoundTheCallFailsAsTheChannelSays() {
        CompletableFuture<Object> f = new ReplicaFailoverInterceptor(inOrder, t -> false)
                .intercept(call("ping", null), answering(Map.of()));
        assertThrows(Switchboard.NotBoundException.class, () -> AsyncCalls.await(f));
        assertTrue(tried.isEmpty());
    }

    @Test
    void aReplicaDroppedSinceItWasPickedIsSkipped() {
        replica("a").retire();
        replica("b");
        assertEquals("from b", new ReplicaFailoverInterceptor(inOrder, t -> false)
                .intercept(call("ping", null), answering(Map.of("b", "from b"))).join());
        assertEquals(List.of("b"), tried);
    }

    @Test
    void anAsynchronousFailureMovesOnWhenItArrives() throws Exception {
        replica("a");
        replica("b");
        CompletableFuture<Object> fromA = new CompletableFuture<>();
        CompletableFuture<Object> f = new ReplicaFailoverInterceptor(inOrder, t -> false).intercept(
                call("ping", new CompletableFuture<>()), answering(Map.of("a", fromA, "b", "from b")));
        assertFalse(f.isDone());
        new Thread(() -> fromA.completeExceptionally(failure(Delivery.NOT_DELIVERED))).start();
        assertEquals("from b", f.get(10, TimeUnit.SECONDS));
        assertEquals(List.of("a", "b"), tried);
    }
}
