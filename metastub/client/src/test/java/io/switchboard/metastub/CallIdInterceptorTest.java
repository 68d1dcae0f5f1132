package io.switchboard.metastub;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;

import io.switchboard.protocol.CallOptions;
import io.switchboard.testing.conformance.ConformanceComponent;
import java.util.List;
import org.junit.jupiter.api.Test;

class CallIdInterceptorTest {
    private final ClientInterceptor ids = new CallIdInterceptor();

    @Test
    void aCallWithoutAnIdGetsOneEveryAttemptKeeps() {
        ScriptedStep next = new ScriptedStep();
        // a step below that sends the call twice, as the failsafe does
        ClientInterceptor twice = (call, n) -> n.proceed(call).thenCompose(r -> n.proceed(call));
        InterceptorChain.of(List.of(ids, twice), next).proceed(InterceptorChainTest.call("ping")).join();
        assertNotNull(next.seen.get(0).callId());
        assertEquals(32, next.seen.get(0).callId().length(), "128 random bits in hex");
        assertEquals(next.seen.get(0).callId(), next.seen.get(1).callId());
    }

    @Test
    void theCallersOwnIdIsKept() {
        ScriptedStep next = new ScriptedStep();
        ClientCall call = new ClientCall("Conformance", ConformanceComponent.DESCRIPTOR.operation("ping"), null,
                CallOptions.DEFAULT.withCallId("mine"), null);
        ids.intercept(call, next).join();
        assertEquals("mine", next.seen.get(0).callId());
    }

    @Test
    void twoCallsGetTwoIds() {
        ScriptedStep next = new ScriptedStep();
        ids.intercept(InterceptorChainTest.call("ping"), next).join();
        ids.intercept(InterceptorChainTest.call("ping"), next).join();
        assertNotEquals(next.seen.get(0).callId(), next.seen.get(1).callId());
    }
}
