package io.switchboard.server;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;

import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import io.switchboard.idl.runtime.OperationDescriptor;
import io.switchboard.protocol.RefusedException;
import io.switchboard.protocol.ServerCall;
import io.switchboard.protocol.ServerInterceptor;
import io.switchboard.protocol.spi.DeduplicatingInterceptor;
import io.switchboard.registry.CallSummary;
import io.switchboard.testing.conformance.ConformanceComponent;
import io.switchboard.testing.conformance.DivideFault;
import io.switchboard.testing.conformance.DivideFaultException;
import io.switchboard.testing.conformance.Increment;
import java.time.Duration;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;

/** The counting step alone, with a fake next step: outcomes, repeats, refusals, per protocol. */
class CallStatsInterceptorTest {
    private static final OperationDescriptor INCREMENT = ConformanceComponent.DESCRIPTOR.operation("increment");
    private static final OperationDescriptor DIVIDE = ConformanceComponent.DESCRIPTOR.operation("divide");

    private final ServerCallStats stats = new ServerCallStats(new SimpleMeterRegistry());
    private final AtomicInteger ran = new AtomicInteger();
    private final Object answer = new Object();

    private static ServerCall call(OperationDescriptor op, String protocol, String callId) {
        return new ServerCall("Counted", ConformanceComponent.DESCRIPTOR, protocol, op, null, callId);
    }

    @Test
    void countsEachOutcomeUnderItsComponentOperationAndProtocol() throws Exception {
        CallStatsInterceptor counting = new CallStatsInterceptor(stats, null);
        ServerInterceptor.Chain ok = c -> {
            ran.incrementAndGet();
            return answer;
        };
        assertSame(answer, counting.intercept(call(INCREMENT, "grpc", "a"), ok), "the answer goes back unchanged");
        assertSame(answer, counting.intercept(call(INCREMENT, "grpc", "a"), ok));   // no de-duplicator: not a repeat
        DivideFault info = new DivideFault();
        assertThrows(DivideFaultException.class, () -> counting.intercept(call(DIVIDE, "soap", null), c -> {
            throw new DivideFaultException(info);
        }));
        assertThrows(IllegalStateException.class, () -> counting.intercept(call(DIVIDE, "soap", null), c -> {
            throw new IllegalStateException("broken");
        }));

        assertEquals(2, ran.get());
        CallSummary s = stats.summary("Counted");
        assertEquals(2, s.row("increment", "grpc").calls());
        assertEquals(2, s.row("increment", "grpc").succeeded());
        assertEquals(0, s.row("increment", "grpc").repeats());
        CallSummary.Row d = s.row("divide", "soap");
        assertEquals(2, d.calls());
        assertEquals(1, d.faults());
        assertEquals(1, d.errors());
        assertEquals(2.0, stats.meters().get(ServerCallStats.CALLS).tag("component", "Counted")
                .tag("operation", "increment").tag("protocol", "grpc").tag("outcome", "ok").timer().count(),
                "one timer per outcome, fed by the step");
    }

    @Test
    void aCallIdTheDeduplicatorRemembersIsARepeatWhateverItsOutcome() throws Exception {
        DeduplicatingInterceptor once = new DeduplicatingInterceptor(1 << 20, Duration.ofMinutes(1));
        CallStatsInterceptor counting = new CallStatsInterceptor(stats, once);
        ServerInterceptor.Chain throughTheDeduplicator = c -> once.intercept(c, inner -> {
            ran.incrementAndGet();
            return answer;
        });

        counting.intercept(call(INCREMENT, "grpc", "id-1"), throughTheDeduplicator);
        assertSame(answer, counting.intercept(call(INCREMENT, "soap", "id-1"), throughTheDeduplicator));

        assertEquals(1, ran.get(), "the repeat did not run again");
        CallSummary s = stats.summary("Counted");
        assertEquals(0, s.row("increment", "grpc").repeats());
        assertEquals(1, s.row("increment", "soap").repeats(), "the fallback over SOAP is counted as a repeat");
        assertEquals(0, s.row("increment", "soap").succeeded());
    }

    @Test
    void aReusedCallIdIsCountedAsARefusalNotAsACall() throws Exception {
        DeduplicatingInterceptor once = new DeduplicatingInterceptor(1 << 20, Duration.ofMinutes(1));
        CallStatsInterceptor counting = new CallStatsInterceptor(stats, once);
        ServerInterceptor.Chain throughTheDeduplicator = c -> once.intercept(c, inner -> {
            ran.incrementAndGet();
            return answer;
        });
        Increment one = new Increment();
        one.setBy(1);
        Increment two = new Increment();
        two.setBy(2);

        counting.intercept(new ServerCall("Counted", ConformanceComponent.DESCRIPTOR, "grpc", INCREMENT, one, "id-9"),
                throughTheDeduplicator);
        RefusedException e = assertThrows(RefusedException.class, () -> counting.intercept(new ServerCall("Counted",
                ConformanceComponent.DESCRIPTOR, "soap", INCREMENT, two, "id-9"), throughTheDeduplicator));

        assertEquals(DeduplicatingInterceptor.CALL_ID_REUSE, e.reason());
        assertEquals(1, ran.get());
        CallSummary.Row soap = stats.summary("Counted").row("increment", "soap");
        assertEquals(1, soap.refusals());
        assertEquals(0, soap.calls(), "neither a call nor a repeat");
        assertEquals(1.0, stats.meters().get(ServerCallStats.REFUSALS).tag("reason", "call-id-reuse").counter().count());
    }

    @Test
    void aRefusalIsCountedByReasonAndNeverAsACall() {
        CallStatsInterceptor counting = new CallStatsInterceptor(stats, null);
        counting.refused(new ServerCall("Counted", ConformanceComponent.DESCRIPTOR, "soap", INCREMENT, null, null),
                "malformed");
        counting.refused(new ServerCall("Counted", ConformanceComponent.DESCRIPTOR, "soap", INCREMENT, null, null), null);

        CallSummary.Row row = stats.summary("Counted").row("increment", "soap");
        assertEquals(2, row.refusals());
        assertEquals(0, row.calls());
        assertEquals(1.0, stats.meters().get(ServerCallStats.REFUSALS).tag("reason", "malformed").counter().count());
        assertEquals(1.0, stats.meters().get(ServerCallStats.REFUSALS).tag("reason", "unknown").counter().count());
    }
}
