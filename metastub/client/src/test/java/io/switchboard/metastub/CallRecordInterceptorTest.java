package io.switchboard.metastub;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.switchboard.protocol.CallOptions;
import io.switchboard.protocol.Endpoint;
import io.switchboard.protocol.TransportException;
import io.switchboard.protocol.WireBytes;
import io.switchboard.testing.conformance.ConformanceComponent;
import io.switchboard.testing.conformance.DivideFault;
import io.switchboard.testing.conformance.DivideFaultException;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

/** The call record step alone: one record per attempt, with what the steps below it counted. */
class CallRecordInterceptorTest {
    private final List<CallRecord> records = new CopyOnWriteArrayList<>();
    private final List<CallRecord> learned = new CopyOnWriteArrayList<>();
    private final ProtocolSuite suite = ProtocolSuite.of(List.of("soap"),
            List.of(new Endpoint("soap", "http://127.0.0.1:1/services/Conformance")));
    private final MessageSize sizes = new MessageSize(ConformanceComponent.DESCRIPTOR.model());
    private final List<CallListener> listeners = new CopyOnWriteArrayList<>(List.of(records::add));
    private final CallRecordInterceptor recorder = new CallRecordInterceptor(listeners, sizes, new ResponseSizes());

    private ClientCall call(String operation, Object request, CompletableFuture<Object> caller) {
        ClientCall call = new ClientCall("Conformance", ConformanceComponent.DESCRIPTOR.operation(operation), request,
                CallOptions.DEFAULT.withCallId("id-1"), caller);
        call.suite = suite;
        call.context = new CallContext(call.operation(), request, suite, sizes);
        call.policy = new SelectionPolicy() {
            @Override
            public String name() {
                return "first-common";
            }

            @Override
            public String select(CallContext context, List<String> candidates) {
                return candidates.get(0);
            }

            @Override
            public void observe(CallRecord record) {
                learned.add(record);
            }
        };
        call.route("soap", "first-common (stub policy)");
        return call;
    }

    /** A step below that counts wire bytes as a transport would, then answers {@code outcome}. */
    private static ClientInterceptor.Chain counting(Object outcome) {
        ScriptedStep answer = new ScriptedStep(outcome);
        return call -> {
            call.wire = new WireBytes();
            call.wire.addSent(120);
            call.wire.addReceived(80);
            return answer.proceed(call);
        };
    }

    @Test
    void aSuccessIsRecordedForThePolicyAndEveryListener() {
        ClientCall call = call("echoDoubles", new double[] {1, 2}, null);
        assertEquals("back", recorder.intercept(call, counting("back")).join());
        assertEquals(1, records.size());
        CallRecord r = records.get(0);
        assertEquals("Conformance", r.component());
        assertEquals("echoDoubles", r.operation());
        assertEquals("id-1", r.callId());
        assertEquals("soap", r.protocol());
        assertEquals("first-common (stub policy)", r.reason());
        assertEquals(120, r.requestWireBytes());
        assertEquals(80, r.responseWireBytes());
        assertNull(r.error());
        assertTrue(r.latency().toNanos() >= 0);
        assertEquals(records, learned);
    }

    @Test
    void aFailureIsRecordedWithItsErrorAndADeclaredFaultAsAnAnswer() {
        recorder.intercept(call("ping", null, null),
                counting(new TransportException("soap", TransportException.Delivery.NOT_DELIVERED, "refused", null)));
        recorder.intercept(call("divide", null, null), counting(new DivideFaultException(new DivideFault())));
        assertTrue(records.get(0).error().startsWith("TransportException: ") && records.get(0).error().contains("refused"),
                records.get(0).error());
        assertNull(records.get(1).error(), "a declared fault is an answer");
    }

    @Test
    void aListenerThatThrowsDoesNotFailTheCallNorSilenceTheOthers() {
        listeners.add(0, r -> {
            throw new IllegalStateException("broken listener");
        });
        assertEquals("back", recorder.intercept(call("ping", null, null), counting("back")).join());
        assertEquals(1, records.size());
    }

    @Test
    void anAsynchronousAttemptIsRecordedWhenItEndsBeforeTheCallerHearsOfIt() throws Exception {
        CompletableFuture<Object> later = new CompletableFuture<>();
        CompletableFuture<Object> outcome = recorder.intercept(call("ping", null, new CompletableFuture<>()),
                c -> later);
        assertTrue(records.isEmpty(), "nothing to record before the attempt ends");
        CountDownLatch heard = new CountDownLatch(1);
        int[] recordsWhenHeard = new int[1];
        outcome.whenComplete((r, t) -> {
            recordsWhenHeard[0] = records.size();
            heard.countDown();
        });
        new Thread(() -> later.complete("back")).start();
        assertTrue(heard.await(10, TimeUnit.SECONDS));
        assertEquals(1, recordsWhenHeard[0]);
        assertEquals(-1, records.get(0).requestWireBytes(), "no transport counted");
    }
}
