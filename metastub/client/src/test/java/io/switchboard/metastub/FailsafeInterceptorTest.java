package io.switchboard.metastub;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.switchboard.protocol.AsyncCalls;
import io.switchboard.protocol.CallOptions;
import io.switchboard.protocol.TransportException;
import io.switchboard.protocol.TransportException.Delivery;
import io.switchboard.testing.conformance.ConformanceComponent;
import io.switchboard.testing.conformance.DivideFault;
import io.switchboard.testing.conformance.DivideFaultException;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

/** The failsafe alone, over a scripted next step: what it repeats over SOAP, what it does not, and the back-off. */
class FailsafeInterceptorTest {
    private final ProtocolHealth health = new ProtocolHealth(Duration.ofSeconds(2), Duration.ofSeconds(8), () -> 0L);

    private static TransportException failure(Delivery delivery) {
        return new TransportException("grpc", delivery, "injected", null);
    }

    private static ClientCall call(String operation, String protocol, CompletableFuture<Object> caller) {
        ClientCall call = new ClientCall("Conformance", ConformanceComponent.DESCRIPTOR.operation(operation), null,
                CallOptions.DEFAULT.withCallId("c1"), caller);
        call.route(protocol, "first-common (stub policy)");
        return call;
    }

    private static Throwable thrown(CompletableFuture<Object> f) {
        return assertThrows(Throwable.class, () -> AsyncCalls.await(f));
    }

    @Test
    void aFailureThatNeverArrivedIsRepeatedOverSoapAndTheProtocolBacksOff() {
        ScriptedStep next = new ScriptedStep(failure(Delivery.NOT_DELIVERED), "answer");
        ClientCall call = call("increment", "grpc", null);
        CompletableFuture<Object> f = new FailsafeInterceptor(health, false).intercept(call, next);
        assertTrue(f.isDone(), "a blocking call is complete when the step returns");
        assertEquals("answer", f.join());
        assertEquals(2, next.seen.size());
        ScriptedStep.Seen again = next.seen.get(1);
        assertEquals("soap", again.protocol());
        assertEquals(1, again.attempt());
        assertTrue(again.fallback());
        assertEquals("fallback from grpc (the request never reached the operation)", again.reason());
        assertEquals("c1", again.callId(), "the same call id");
        assertTrue(health.avoided("grpc"));
    }

    @Test
    void aCallThatMayHaveRunIsRepeatedOnlyIfIdempotentOrTheServerKnowsCallIds() {
        ScriptedStep idempotent = new ScriptedStep(failure(Delivery.MAY_HAVE_RUN), "answer");
        assertEquals("answer", new FailsafeInterceptor(health, false).intercept(call("ping", "grpc", null), idempotent)
                .join());
        assertEquals("fallback from grpc (the operation is idempotent)", idempotent.seen.get(1).reason());

        ScriptedStep knowsIds = new ScriptedStep(failure(Delivery.MAY_HAVE_RUN), "answer");
        assertEquals("answer", new FailsafeInterceptor(health, true).intercept(call("increment", "grpc", null),
                knowsIds).join());

        ScriptedStep neither = new ScriptedStep(failure(Delivery.MAY_HAVE_RUN), "never");
        Throwable t = thrown(new FailsafeInterceptor(health, false).intercept(call("increment", "grpc", null), neither));
        TransportException e = (TransportException) t;
        assertEquals(Delivery.MAY_HAVE_RUN, e.delivery());
        assertTrue(e.getMessage().contains("not repeated over SOAP"), e.getMessage());
        assertEquals(1, neither.seen.size());
    }

    @Test
    void aFallbackThatNeverArrivedAfterOneThatMayHaveRunSaysItMayHaveRun() {
        ScriptedStep next = new ScriptedStep(failure(Delivery.MAY_HAVE_RUN),
                new TransportException("soap", Delivery.NOT_DELIVERED, "refused", null));
        TransportException e = (TransportException) thrown(new FailsafeInterceptor(health, true)
                .intercept(call("increment", "grpc", null), next));
        assertEquals(Delivery.MAY_HAVE_RUN, e.delivery());
        assertTrue(e.getMessage().contains("increment over grpc may have run; the fallback over SOAP was not delivered"),
                e.getMessage());
        assertEquals(2, next.seen.size(), "one fallback, never a second");
    }

    @Test
    void answersSoapAndPinnedCallsAreNeverRepeated() {
        DivideFaultException fault = new DivideFaultException(new DivideFault());
        ScriptedStep faulted = new ScriptedStep(fault);
        health.failed("grpc");
        assertSame(fault, thrown(new FailsafeInterceptor(health, true).intercept(call("divide", "grpc", null), faulted)));
        assertEquals(1, faulted.seen.size());
        assertFalse(health.avoided("grpc"), "a declared fault is an answer: the protocol works");

        ScriptedStep remote = new ScriptedStep(new IllegalStateException("remote"));
        thrown(new FailsafeInterceptor(health, true).intercept(call("ping", "grpc", null), remote));
        assertEquals(1, remote.seen.size());

        ScriptedStep soap = new ScriptedStep(failure(Delivery.NOT_DELIVERED));
        thrown(new FailsafeInterceptor(health, true).intercept(call("ping", "soap", null), soap));
        assertEquals(1, soap.seen.size());

        ClientCall pinned = call("ping", "grpc", null);
        pinned.pinned = true;
        ScriptedStep pinnedNext = new ScriptedStep(failure(Delivery.NOT_DELIVERED));
        thrown(new FailsafeInterceptor(health, true).intercept(pinned, pinnedNext));
        assertEquals(1, pinnedNext.seen.size());
    }

    @Test
    void anAsynchronousFailureFallsBackWhenItArrives() throws Exception {
        CompletableFuture<Object> first = new CompletableFuture<>();
        ScriptedStep next = new ScriptedStep(first, "answer");
        CompletableFuture<Object> caller = new CompletableFuture<>();
        CompletableFuture<Object> f = new FailsafeInterceptor(health, false).intercept(call("ping", "grpc", caller), next);
        assertFalse(f.isDone());
        Thread transport = new Thread(() -> first.completeExceptionally(failure(Delivery.NOT_DELIVERED)));
        transport.start();
        assertEquals("answer", f.get(10, TimeUnit.SECONDS));
        assertEquals(List.of("grpc", "soap"), next.seen.stream().map(ScriptedStep.Seen::protocol).toList());
    }

    @Test
    void aCancelledCallStartsNoFallback() throws Exception {
        CompletableFuture<Object> first = new CompletableFuture<>();
        ScriptedStep next = new ScriptedStep(first, "never");
        CompletableFuture<Object> caller = new CompletableFuture<>();
        CompletableFuture<Object> f = new FailsafeInterceptor(health, false).intercept(call("ping", "grpc", caller), next);
        caller.cancel(true);
        first.completeExceptionally(failure(Delivery.NOT_DELIVERED));
        assertTrue(f.isCompletedExceptionally());
        assertEquals(1, next.seen.size());
        assertFalse(health.avoided("grpc"), "a cancelled attempt says nothing about the protocol");
    }
}
