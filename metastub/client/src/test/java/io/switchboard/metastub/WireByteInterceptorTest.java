package io.switchboard.metastub;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNotSame;
import static org.junit.jupiter.api.Assertions.assertSame;

import java.util.List;
import org.junit.jupiter.api.Test;

class WireByteInterceptorTest {
    @Test
    void eachAttemptGetsAFreshCounterInItsOptions() {
        ScriptedStep next = new ScriptedStep();
        ClientInterceptor wire = new WireByteInterceptor();
        ClientInterceptor twice = (call, n) -> n.proceed(call).thenCompose(r -> {
            call.repeat("soap", "again", true);
            return n.proceed(call);
        });
        ClientCall call = InterceptorChainTest.call("ping");
        InterceptorChain.of(List.of(twice, wire), next).proceed(call).join();
        assertNotNull(next.seen.get(0).options().wireBytes());
        assertNotSame(next.seen.get(0).options().wireBytes(), next.seen.get(1).options().wireBytes());
        assertSame(next.seen.get(1).options().wireBytes(), call.wire, "the record step reads what the transport got");
        assertEquals(-1, call.wire.sent(), "nothing counted until a transport counts");
    }
}
