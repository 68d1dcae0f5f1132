package io.switchboard.metastub;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.switchboard.protocol.CallOptions;
import io.switchboard.protocol.Endpoint;
import io.switchboard.testing.conformance.ConformanceComponent;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import org.junit.jupiter.api.Test;

class SelectionInterceptorTest {
    private final ProtocolSuite suite = ProtocolSuite.of(List.of("inproc", "soap"), List.of(
            new Endpoint("inproc", "inproc://none/Conformance"),
            new Endpoint("soap", "http://127.0.0.1:1/services/Conformance")));
    private final SelectionPolicy stubPolicy = new FirstCommonPolicy();
    private final Map<String, SelectionPolicy> operationPolicies = new ConcurrentHashMap<>();
    private final ProtocolHealth health = new ProtocolHealth(Duration.ofSeconds(2), Duration.ofSeconds(8), () -> 0L);
    private final SelectionInterceptor selection = new SelectionInterceptor(() -> suite, stubPolicy, operationPolicies,
            health, new MessageSize(ConformanceComponent.DESCRIPTOR.model()), new ResponseSizes(), true);
    private final ScriptedStep next = new ScriptedStep();

    private ClientCall call(CallOptions options) {
        return new ClientCall("Conformance", ConformanceComponent.DESCRIPTOR.operation("echoDoubles"),
                new double[] {1}, options, null);
    }

    @Test
    void theStubsPolicyChoosesAmongTheSharedProtocols() {
        ClientCall call = call(CallOptions.DEFAULT);
        selection.intercept(call, next).join();
        assertEquals("inproc", next.seen.get(0).protocol());
        assertEquals("first-common (stub policy)", next.seen.get(0).reason());
        assertSame(stubPolicy, call.policy, "the policy that chose learns from the records");
        assertSame(suite, call.suite);
        assertFalse(call.pinned);
        assertEquals(0, next.seen.get(0).attempt());
    }

    @Test
    void anOperationsPolicyWinsOverTheStubsAndACallsOverBoth() {
        operationPolicies.put("echoDoubles", new FixedPolicy("soap"));
        selection.intercept(call(CallOptions.DEFAULT), next).join();
        assertEquals("soap", next.seen.get(0).protocol());
        assertTrue(next.seen.get(0).reason().endsWith("(operation policy)"), next.seen.get(0).reason());
        selection.intercept(call(CallOptions.DEFAULT.with(MetaStub.POLICY, new FirstCommonPolicy())), next).join();
        assertEquals("inproc", next.seen.get(1).protocol());
        assertEquals("first-common (call policy)", next.seen.get(1).reason());
    }

    @Test
    void callsAlternatingBetweenPoliciesEachGetTheirOwnPolicysReason() {
        SelectionPolicy first = new FirstCommonPolicy();
        SelectionPolicy soap = new FixedPolicy("soap");
        for (SelectionPolicy p : List.of(first, soap, first, soap)) {
            selection.intercept(call(CallOptions.DEFAULT.with(MetaStub.POLICY, p)), next).join();
        }
        selection.intercept(call(CallOptions.DEFAULT), next).join();
        assertEquals(List.of("first-common (call policy)", soap.name() + " (call policy)", "first-common (call policy)",
                soap.name() + " (call policy)", "first-common (stub policy)"),
                next.seen.stream().map(s -> s.reason()).toList());
        assertEquals(List.of("inproc", "soap", "inproc", "soap", "inproc"),
                next.seen.stream().map(s -> s.protocol()).toList());
    }

    @Test
    void aProtocolInBackOffIsNotOfferedAndTheReasonSaysSo() {
        health.failed("inproc");
        selection.intercept(call(CallOptions.DEFAULT), next).join();
        assertEquals("soap", next.seen.get(0).protocol());
        assertEquals("first-common (stub policy; inproc in back-off)", next.seen.get(0).reason());
    }

    @Test
    void aPinnedCallGoesWhereItIsToldEvenInBackOff() {
        health.failed("inproc");
        ClientCall call = call(CallOptions.DEFAULT.with(MetaStub.PROTOCOL, "inproc"));
        selection.intercept(call, next).join();
        assertEquals("inproc", next.seen.get(0).protocol());
        assertEquals("pinned on call", next.seen.get(0).reason());
        assertTrue(call.pinned);
    }

    @Test
    void pinningAProtocolNotSharedFailsBeforeAnythingIsSent() {
        ClientCall call = call(CallOptions.DEFAULT.with(MetaStub.PROTOCOL, "grpc"));
        assertThrows(NoCommonProtocolException.class, () -> selection.intercept(call, next));
        assertTrue(next.seen.isEmpty());
    }
}
