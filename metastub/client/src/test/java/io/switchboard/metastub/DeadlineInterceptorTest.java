package io.switchboard.metastub;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.switchboard.protocol.AsyncCalls;
import io.switchboard.protocol.CallOptions;
import io.switchboard.protocol.ServerCallContext;
import io.switchboard.protocol.DeadlineExceededException;
import io.switchboard.protocol.TransportException;
import io.switchboard.protocol.TransportException.Delivery;
import io.switchboard.testing.conformance.ConformanceComponent;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.Test;

/**
 * The deadline step alone, on a fake clock over a scripted next step, and with the failsafe between
 * its two places: the deadline is fixed once, every attempt gets at most the time left, and no
 * attempt starts after it.
 */
class DeadlineInterceptorTest {
    private static final long MS = 1_000_000;
    private static final Duration DEFAULT_TIMEOUT = Duration.ofSeconds(120);

    private final AtomicLong clock = new AtomicLong(5_000 * MS);
    private final DeadlineInterceptor onCall = DeadlineInterceptor.call(clock::get);
    private final DeadlineInterceptor onAttempt = DeadlineInterceptor.attempt(clock::get, DEFAULT_TIMEOUT);
    private final ProtocolHealth health = new ProtocolHealth(Duration.ofSeconds(2), Duration.ofSeconds(8), clock::get);

    private static ClientCall call(String operation, CallOptions options, CompletableFuture<Object> caller) {
        ClientCall call = new ClientCall("Conformance", ConformanceComponent.DESCRIPTOR.operation(operation), null,
                options.withCallId("c1"), caller);
        call.route("grpc", "first-common (stub policy)");
        return call;
    }

    /** The meta-stub's order: deadline fixed, failsafe, deadline per attempt, then {@code next}. */
    private ClientInterceptor.Chain chain(ClientInterceptor.Chain next) {
        return InterceptorChain.of(List.of(onCall, new FailsafeInterceptor(health, false), onAttempt), next);
    }

    /** A next step that moves the clock by {@code ms} during each attempt, then answers as {@code script} says. */
    private ClientInterceptor.Chain taking(long ms, ScriptedStep script) {
        return c -> {
            clock.addAndGet(ms * MS);
            return script.proceed(c);
        };
    }

    /** What the call failed with, which must be the deadline's refusal. */
    private static DeadlineExceededException refusal(CompletableFuture<Object> f) {
        return assertInstanceOf(DeadlineExceededException.class, assertThrows(Throwable.class, () -> AsyncCalls.await(f)));
    }

    private static TransportException failure(Delivery delivery) {
        return new TransportException("grpc", delivery, "injected", null);
    }

    @Test
    void aCallWithoutDeadlineGoesThroughUntouched() {
        CallOptions options = CallOptions.DEFAULT.withTimeout(Duration.ofSeconds(3)).withCallId("c1");
        ScriptedStep next = new ScriptedStep("answer");
        ClientCall call = call("ping", options, null);
        call.options(options);
        assertEquals("answer", InterceptorChain.of(List.of(onCall, onAttempt), next).proceed(call).join());
        assertSame(options, next.seen.get(0).options(), "the same options, not a copy");
        assertNull(next.seen.get(0).options().deadlineNanoTime());
    }

    @Test
    void aCallMadeInsideAnOperationGetsNoMoreThanTheTimeItsCallerLeft() {
        // the operation's call must end 300 ms from now (the clocks are one: the fake one)
        ServerCallContext operation = ServerCallContext.create(5_300 * MS, null);
        ScriptedStep next = new ScriptedStep("a", "b", "c");
        try (ServerCallContext.Scope scope = operation.enter()) {
            onCall.intercept(call("ping", CallOptions.DEFAULT, null), next);
            onCall.intercept(call("ping", CallOptions.DEFAULT.withDeadlineAfter(Duration.ofMinutes(10)), null), next);
            onCall.intercept(call("ping", CallOptions.DEFAULT.withDeadlineAfter(Duration.ofMillis(100)), null), next);
        }
        onCall.intercept(call("ping", CallOptions.DEFAULT, null), next);
        assertEquals(5_300 * MS, next.seen.get(0).options().deadlineNanoTime(), "none of its own: the operation's");
        assertEquals(5_300 * MS, next.seen.get(1).options().deadlineNanoTime(), "a longer one of its own: never more");
        assertEquals(5_100 * MS, next.seen.get(2).options().deadlineNanoTime(), "a shorter one of its own stays");
        assertNull(next.seen.get(3).options().deadlineNanoTime(), "outside an operation: nothing inherited");
    }

    @Test
    void theDeadlineIsFixedWhenTheCallStartsAndAnEnclosingChannelsDeadlineStays() {
        CallOptions keptOnAStub = CallOptions.DEFAULT.withDeadlineAfter(Duration.ofMillis(500));
        ScriptedStep next = new ScriptedStep("first", "second");
        onCall.intercept(call("ping", keptOnAStub, null), next);
        clock.addAndGet(1_000 * MS);   // the same options, a second later: a new deadline
        onCall.intercept(call("ping", keptOnAStub, null), next);
        assertEquals(5_500 * MS, next.seen.get(0).options().deadlineNanoTime());
        assertEquals(6_500 * MS, next.seen.get(1).options().deadlineNanoTime());
        assertEquals(Duration.ofMillis(500), next.seen.get(1).options().deadlineAfter());

        // a nested channel (a replica's meta-stub) counts down to the instant its caller fixed
        ClientCall nested = call("ping", next.seen.get(0).options(), null);
        onCall.intercept(nested, next);
        assertEquals(5_500 * MS, next.seen.get(2).options().deadlineNanoTime());
    }

    @Test
    void eachAttemptGetsTheSmallerOfItsTimeoutAndTheTimeLeft() {
        // 10 s per attempt, 500 ms for the whole call: the first attempt gets 500 ms
        ScriptedStep next = new ScriptedStep(failure(Delivery.NOT_DELIVERED), "answer");
        CompletableFuture<Object> f = chain(taking(200, next)).proceed(call("increment",
                CallOptions.DEFAULT.withTimeout(Duration.ofSeconds(10)).withDeadlineAfter(Duration.ofMillis(500)), null));
        assertEquals("answer", f.join());
        assertEquals(2, next.seen.size());
        assertEquals(Duration.ofMillis(500), next.seen.get(0).options().timeout());
        assertEquals(Duration.ofMillis(300), next.seen.get(1).options().timeout(), "the fallback gets what is left");
        assertTrue(next.seen.get(1).fallback());

        // 100 ms per attempt within a deadline of 5 s: each attempt keeps its own 100 ms
        ScriptedStep roomy = new ScriptedStep(failure(Delivery.NOT_DELIVERED), "answer");
        chain(taking(100, roomy)).proceed(call("increment",
                CallOptions.DEFAULT.withTimeout(Duration.ofMillis(100)).withDeadlineAfter(Duration.ofSeconds(5)), null));
        assertEquals(Duration.ofMillis(100), roomy.seen.get(0).options().timeout());
        assertEquals(Duration.ofMillis(100), roomy.seen.get(1).options().timeout());

        // no timeout on the call: the client's default bounds each attempt, the deadline bounds them all
        ScriptedStep byDefault = new ScriptedStep("answer");
        chain(byDefault).proceed(call("increment", CallOptions.DEFAULT.withDeadlineAfter(Duration.ofMinutes(5)), null));
        assertEquals(DEFAULT_TIMEOUT, byDefault.seen.get(0).options().timeout());
    }

    /** A first attempt of {@code operation} that fails as {@code first} after 600 ms of a 500 ms deadline. */
    private DeadlineExceededException fallbackRefused(String operation, Delivery first) {
        ScriptedStep next = new ScriptedStep(failure(first), "never sent");
        CompletableFuture<Object> f = chain(taking(600, next)).proceed(call(operation,
                CallOptions.DEFAULT.withDeadlineAfter(Duration.ofMillis(500)), null));
        DeadlineExceededException e = refusal(f);
        assertEquals(1, next.seen.size(), "the fallback over SOAP was not started");
        return e;
    }

    /**
     * A server told 99 ms for a call with 99.6 ms left times out first, and its answer can arrive
     * before the caller's own deadline: that failure is the deadline's all the same (a fresh-clone
     * run under load got a TransportException from a hop chain whose every hop was past its deadline).
     */
    @Test
    void aFailureWithinTheServersRoundingOfTheDeadlineIsTheDeadlines() {
        CompletableFuture<Object> f = chain(c -> {
            clock.addAndGet(499 * MS + MS / 2);   // half a millisecond before the caller's deadline
            return CompletableFuture.failedFuture(failure(Delivery.MAY_HAVE_RUN));
        }).proceed(call("increment", CallOptions.DEFAULT.withDeadlineAfter(Duration.ofMillis(500)),
                new CompletableFuture<>()));
        assertEquals(Delivery.MAY_HAVE_RUN, refusal(f).delivery());
        CompletableFuture<Object> early = chain(c -> {
            clock.addAndGet(490 * MS);   // well before it: the failure is the transport's
            return CompletableFuture.failedFuture(failure(Delivery.MAY_HAVE_RUN));
        }).proceed(call("increment", CallOptions.DEFAULT.withDeadlineAfter(Duration.ofMillis(500)),
                new CompletableFuture<>()));
        assertInstanceOf(TransportException.class, io.switchboard.protocol.AsyncCalls.unwrap(
                assertThrows(Throwable.class, () -> AsyncCalls.await(early))));
    }

    @Test
    void noFallbackStartsOnceTheDeadlineHasPassed() {
        DeadlineExceededException e = fallbackRefused("increment", Delivery.NOT_DELIVERED);
        assertEquals(Delivery.NOT_DELIVERED, e.delivery(), "the only attempt never reached the operation");
        assertTrue(e.getMessage().contains("the fallback over soap of increment"), e.getMessage());
        assertTrue(e.getMessage().contains("500 ms"), e.getMessage());
    }

    @Test
    void aRefusalAfterAnAttemptThatMayHaveRunSaysSo() {
        // ping is idempotent: a failure that may have run would be repeated over SOAP, but time is up
        DeadlineExceededException e = fallbackRefused("ping", Delivery.MAY_HAVE_RUN);
        assertEquals(Delivery.MAY_HAVE_RUN, e.delivery());
        assertTrue(e.getMessage().contains("the operation may have run"), e.getMessage());
    }

    @Test
    void anAsynchronousCallTakesTheSamePath() {
        CompletableFuture<Object> firstAttempt = new CompletableFuture<>();
        ScriptedStep next = new ScriptedStep(firstAttempt, "never sent");
        CompletableFuture<Object> caller = new CompletableFuture<>();
        CompletableFuture<Object> f = chain(next).proceed(call("increment",
                CallOptions.DEFAULT.withDeadlineAfter(Duration.ofMillis(500)), caller));
        assertFalse(f.isDone(), "the attempt is under way");
        clock.addAndGet(501 * MS);
        firstAttempt.completeExceptionally(failure(Delivery.NOT_DELIVERED));   // on a transport's thread, late
        refusal(f);
        assertEquals(1, next.seen.size(), "no fallback after the deadline");
    }

    @Test
    void aRepeatingStepNeverRepeatsARefusalAndCarriesWhatAnEarlierAttemptMayHaveDone() {
        AtomicInteger retries = new AtomicInteger();
        RetryingInterceptor anotherReplica = new RetryingInterceptor() {
            @Override
            protected void ended(ClientCall call, Throwable failure) {
            }

            @Override
            protected Throwable retry(ClientCall call, Throwable failure) {
                retries.incrementAndGet();
                call.repeat(null, "another replica", false);
                return null;
            }
        };
        // the second replica's meta-stub refused: it knew of no attempt before its own
        ScriptedStep replicas = new ScriptedStep(failure(Delivery.MAY_HAVE_RUN),
                new DeadlineExceededException("grpc", Delivery.NOT_DELIVERED, "the deadline passed", null), "never sent");
        CompletableFuture<Object> f = anotherReplica.intercept(call("ping", CallOptions.DEFAULT, null), replicas);
        DeadlineExceededException e = refusal(f);
        assertEquals(Delivery.MAY_HAVE_RUN, e.delivery(), "the first replica may have run it");
        assertEquals(1, retries.get(), "the refusal itself is not retried");
        assertEquals(2, replicas.seen.size());
    }

    @Test
    void deadlinesAndTimeoutsArePositive() {
        assertThrows(IllegalArgumentException.class, () -> CallOptions.DEFAULT.withDeadlineAfter(Duration.ZERO));
        assertNull(CallOptions.DEFAULT.withDeadlineAfter(Duration.ofSeconds(1)).withDeadlineAfter(null).deadlineAfter());
    }
}
