package io.switchboard.metastub;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.switchboard.protocol.AsyncCalls;
import io.switchboard.protocol.Endpoint;
import io.switchboard.protocol.TransportException;
import java.util.concurrent.CompletableFuture;
import org.junit.jupiter.api.Test;

class ConnectInterceptorTest {
    @Test
    void findsTheTransportOfTheAttemptsProtocolInTheCallsSuite() {
        Endpoint soap = new Endpoint("soap", "http://127.0.0.1:1/services/Conformance");
        ProtocolSuite suite = ProtocolSuite.of(java.util.List.of("soap"), java.util.List.of(soap));
        ClientCall call = InterceptorChainTest.call("ping");
        call.suite = suite;
        call.route("soap", "test");
        String[] asked = new String[1];
        ScriptedStep next = new ScriptedStep();
        new ConnectInterceptor((s, protocol) -> {
            assertSame(suite, s);
            asked[0] = protocol;
            return null;
        }).intercept(call, next).join();
        assertEquals("soap", asked[0]);
        assertEquals(1, next.seen.size());
    }

    @Test
    void aTransportThatCannotBeHadFailsTheAttemptWithoutGoingFurther() {
        ClientCall call = InterceptorChainTest.call("ping");
        call.route("grpc", "test");
        ScriptedStep next = new ScriptedStep();
        TransportException refused = new TransportException("grpc", TransportException.Delivery.NOT_DELIVERED, "no", null);
        CompletableFuture<Object> f = new ConnectInterceptor((s, p) -> {
            throw refused;
        }).intercept(call, next);
        assertTrue(f.isCompletedExceptionally());
        assertSame(refused, RetryingInterceptor.failureOf(f));
        assertTrue(next.seen.isEmpty());
        assertSame(refused, org.junit.jupiter.api.Assertions.assertThrows(TransportException.class,
                () -> AsyncCalls.await(f)));
    }
}
