package io.switchboard.metastub;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.switchboard.protocol.CallOptions;
import io.switchboard.protocol.Endpoint;
import io.switchboard.testing.conformance.ConformanceComponent;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import org.junit.jupiter.api.Test;

class InterceptorChainTest {
    static ClientCall call(String operation) {
        return new ClientCall("Conformance", ConformanceComponent.DESCRIPTOR.operation(operation), null,
                CallOptions.DEFAULT, null);
    }

    @Test
    void interceptorsRunInTheOrderGivenThenTheLastStep() {
        List<String> order = new ArrayList<>();
        ClientInterceptor a = (call, next) -> {
            order.add("a");
            return next.proceed(call).thenApply(r -> "a(" + r + ")");
        };
        ClientInterceptor b = (call, next) -> {
            order.add("b");
            return next.proceed(call).thenApply(r -> "b(" + r + ")");
        };
        ClientInterceptor.Chain chain = InterceptorChain.of(List.of(a, b), call -> {
            order.add("last");
            return CompletableFuture.completedFuture("x");
        });
        assertEquals("a(b(x))", chain.proceed(call("ping")).join());
        assertEquals(List.of("a", "b", "last"), order);
    }

    @Test
    void anInterceptorMayAnswerWithoutProceeding() {
        ScriptedStep last = new ScriptedStep();
        ClientInterceptor cache = (call, next) -> CompletableFuture.completedFuture("cached");
        assertEquals("cached", InterceptorChain.of(List.of(cache), last).proceed(call("ping")).join());
        assertTrue(last.seen.isEmpty());
    }

    @Test
    void noInterceptorsIsTheLastStepItself() {
        ScriptedStep last = new ScriptedStep();
        assertSame(last, InterceptorChain.of(List.of(), last));
    }

    @Test
    void theMetaStubsChainIsShownInOrderWithUserInterceptorsAfterConnect() {
        class Mine implements ClientInterceptor {
            @Override
            public CompletableFuture<Object> intercept(ClientCall call, Chain next) {
                return next.proceed(call);
            }
        }
        try (MetaStub stub = MetaStub.builder(ConformanceComponent.DESCRIPTOR).protocols("soap")
                .endpoints(List.of(new Endpoint("soap", "http://127.0.0.1:1/services/Conformance")))
                .interceptor(new Mine()).build()) {
            // no PhaseMarkInterceptor: this JVM runs without -Dswitchboard.phases=true
            assertFalse(io.switchboard.protocol.spi.PhaseMarks.ENABLED);
            assertEquals("DeadlineInterceptor -> CallIdInterceptor -> SelectionInterceptor -> FailsafeInterceptor"
                    + " -> DeadlineInterceptor -> ConnectInterceptor -> Mine"
                    + " -> CallRecordInterceptor -> WireByteInterceptor -> transport", stub.describeChain());
        }
    }
}
