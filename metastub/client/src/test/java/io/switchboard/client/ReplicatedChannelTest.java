package io.switchboard.client;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.switchboard.idl.runtime.OperationDescriptor;
import io.switchboard.metastub.MetaStub;
import io.switchboard.protocol.AsyncCalls;
import io.switchboard.protocol.CallOptions;
import io.switchboard.protocol.DeadlineExceededException;
import io.switchboard.protocol.Endpoint;
import io.switchboard.protocol.TransportException;
import io.switchboard.protocol.TransportException.Delivery;
import io.switchboard.registry.ComponentEntry;
import io.switchboard.testing.conformance.ConformanceComponent;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.function.Function;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * A replicated channel's blocking calls while one replica is bound, the common case, which go
 * straight to its meta-stub: each replica's meta-stub answers what the test scripts for it, no
 * network.
 */
class ReplicatedChannelTest {
    private static final OperationDescriptor PING = ConformanceComponent.DESCRIPTOR.operation("ping");
    private static final OperationDescriptor INCREMENT = ConformanceComponent.DESCRIPTOR.operation("increment");

    /** What each instance's meta-stub does with a call, by instance id: returns the response or throws. */
    private final Map<String, Function<ReplicatedChannel, Object>> outcomes = new ConcurrentHashMap<>();
    private final List<String> tried = Collections.synchronizedList(new ArrayList<>());
    private ReplicatedChannel channel;

    @AfterEach
    void close() {
        if (channel != null) {
            channel.close();
        }
    }

    private static ComponentEntry entry(String id) {
        return new ComponentEntry("Conformance", id,
                List.of(new Endpoint("soap", "http://127.0.0.1:1/services/Conformance")), null, null, Instant.EPOCH);
    }

    /** A meta-stub whose every attempt ends in the scripted outcome, before anything is sent. */
    private MetaStub scripted(ComponentEntry entry) {
        String id = entry.instanceId();
        return MetaStub.builder(ConformanceComponent.DESCRIPTOR).protocols("soap").endpoints(entry.endpoints())
                .interceptor((call, next) -> {
                    tried.add(id);
                    try {
                        return CompletableFuture.completedFuture(outcomes.get(id).apply(channel));
                    } catch (RuntimeException e) {
                        return CompletableFuture.failedFuture(e);
                    }
                }).build();
    }

    private ReplicatedChannel channel(String... ids) {
        channel = new ReplicatedChannel("Conformance", java.util.Arrays.stream(ids).map(ReplicatedChannelTest::entry)
                .toList(), this::scripted, ReplicatedChannel.Choice.LEAST_LOADED, Duration.ofSeconds(5));
        return channel;
    }

    /** "a" fails with {@code failure} after "b" is bound beside it (a restart's new instance), and "b" answers. */
    private void failsWhileAnotherIsBound(RuntimeException failure) {
        outcomes.put("a", c -> {
            c.upsert(entry("b"));
            throw failure;
        });
        outcomes.put("b", c -> "from b");
    }

    private static TransportException failure(Delivery delivery) {
        return new TransportException("soap", delivery, "injected", null);
    }

    @Test
    void aFailureNotDeliveredOnTheOnlyReplicaMovesToOneBoundDuringTheCall() throws Exception {
        failsWhileAnotherIsBound(failure(Delivery.NOT_DELIVERED));
        assertEquals("from b", channel("a").call(PING, null, CallOptions.DEFAULT));
        assertEquals(List.of("a", "b"), tried);
        assertEquals(0, channel.inFlight("a"));
        assertEquals(0, channel.inFlight("b"));
    }

    @Test
    void aFailureThatMayHaveRunOnTheOnlyReplicaMovesOnlyIfIdempotent() throws Exception {
        failsWhileAnotherIsBound(failure(Delivery.MAY_HAVE_RUN));
        TransportException e = assertThrows(TransportException.class,
                () -> channel("a").call(INCREMENT, null, CallOptions.DEFAULT));
        assertEquals(Delivery.MAY_HAVE_RUN, e.delivery());
        assertEquals(List.of("a"), tried);
        assertEquals("from b", channel.call(PING, null, CallOptions.DEFAULT), "b is the one not avoided now");
    }

    @Test
    void withNoOtherReplicaTheCallerGetsTheFailureAndTheReplicaBacksOffUntilItAnswers() throws Exception {
        TransportException refused = failure(Delivery.NOT_DELIVERED);
        outcomes.put("a", c -> {
            throw refused;
        });
        channel("a");
        assertSame(refused, assertThrows(TransportException.class, () -> channel.call(PING, null, CallOptions.DEFAULT)));
        Replica a = onlyReplica();
        assertTrue(a.avoided(System.nanoTime()), "a replica that failed backs off");
        outcomes.put("a", c -> "from a");
        assertEquals("from a", channel.call(PING, null, CallOptions.DEFAULT));
        assertFalse(a.avoided(System.nanoTime()), "and is avoided no more once it answers");
        assertEquals(0, channel.inFlight("a"));
    }

    @Test
    void aDeadlineRefusalOnTheOnlyReplicaDoesNotMoveOn() {
        DeadlineExceededException late = new DeadlineExceededException("soap", Delivery.NOT_DELIVERED, "passed", null);
        failsWhileAnotherIsBound(late);
        assertSame(late, assertThrows(DeadlineExceededException.class,
                () -> channel("a").call(PING, null, CallOptions.DEFAULT)));
        assertEquals(List.of("a"), tried, "an operation's own deadline passed: no other replica is tried");
    }

    @Test
    void anErrorOnTheOnlyReplicaLeavesNoCallCountedInFlight() {
        outcomes.put("a", c -> {
            throw new StackOverflowError("injected");
        });
        assertThrows(StackOverflowError.class, () -> channel("a").call(PING, null, CallOptions.DEFAULT));
        assertEquals(0, channel.inFlight("a"), "a call counted in would keep a retired replica's meta-stub open");
    }

    @Test
    void anErrorOnOneOfSeveralReplicasLeavesNoCallCountedInFlight() {
        outcomes.put("a", c -> {
            throw new StackOverflowError("injected");
        });
        outcomes.put("b", c -> {
            throw new StackOverflowError("injected");
        });
        channel("a", "b");
        assertThrows(StackOverflowError.class, () -> channel.call(PING, null, CallOptions.DEFAULT));
        assertThrows(StackOverflowError.class, () -> AsyncCalls.await(channel.callAsync(PING, null, CallOptions.DEFAULT)));
        assertEquals(2, tried.size(), "an Error is no failure to move on from: one replica per call " + tried);
        assertEquals(0, channel.inFlight("a"));
        assertEquals(0, channel.inFlight("b"));
    }

    @Test
    void aCallWithADeadlineOnTheOnlyReplicaMovesOnWithinIt() throws Exception {
        failsWhileAnotherIsBound(failure(Delivery.NOT_DELIVERED));
        assertEquals("from b", channel("a").call(PING, null, CallOptions.DEFAULT.withDeadlineAfter(Duration.ofSeconds(5))));
        assertEquals(List.of("a", "b"), tried);
    }

    private Replica onlyReplica() {
        List<Replica> all = channel.replicasNow();
        assertEquals(1, all.size());
        return all.get(0);
    }
}
