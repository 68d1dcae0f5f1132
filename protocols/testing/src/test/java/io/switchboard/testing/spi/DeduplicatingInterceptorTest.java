package io.switchboard.testing.spi;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.switchboard.idl.runtime.OperationDescriptor;
import io.switchboard.protocol.ServerCall;
import io.switchboard.protocol.ServerInterceptor;
import io.switchboard.protocol.spi.DeduplicatingInterceptor;
import io.switchboard.testing.conformance.ConformanceComponent;
import io.switchboard.testing.conformance.DivideFault;
import io.switchboard.testing.conformance.DivideFaultException;
import java.time.Duration;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;

/** The de-duplicating step alone, with a fake next step (the skeleton form is {@link DeduplicatingSkeletonTest}). */
class DeduplicatingInterceptorTest {
    private static final OperationDescriptor INCREMENT = ConformanceComponent.DESCRIPTOR.operation("increment");

    private final DeduplicatingInterceptor once = new DeduplicatingInterceptor(100, Duration.ofMinutes(1));
    private final AtomicInteger runs = new AtomicInteger();

    private static ServerCall call(String protocol, String callId) {
        return new ServerCall("Counter", ConformanceComponent.DESCRIPTOR, protocol, INCREMENT, new Object(), callId);
    }

    @Test
    void aRepeatedCallIdGetsTheFirstResultWithoutRunningAgainWhateverItsProtocol() throws Exception {
        ServerInterceptor.Chain next = c -> new long[] {runs.incrementAndGet()};

        assertFalse(once.remembers(INCREMENT, "id-1"));
        Object first = once.intercept(call("grpc", "id-1"), next);
        assertTrue(once.remembers(INCREMENT, "id-1"), "the id is now a repeat for the counting step");
        Object repeat = once.intercept(call("soap", "id-1"), next);
        Object other = once.intercept(call("soap", "id-2"), next);

        assertSame(first, repeat, "the first run's answer itself");
        assertEquals(2, runs.get(), "id-1 ran once, id-2 once");
        assertEquals(2L, ((long[]) other)[0]);
        assertEquals(2, once.remembered());
    }

    @Test
    void aRepeatOfAFailedCallGetsTheSameFailure() {
        DivideFaultException fault = new DivideFaultException(new DivideFault());
        ServerInterceptor.Chain failing = c -> {
            runs.incrementAndGet();
            throw fault;
        };

        assertSame(fault, assertThrows(DivideFaultException.class, () -> once.intercept(call("grpc", "f"), failing)));
        assertSame(fault, assertThrows(DivideFaultException.class, () -> once.intercept(call("soap", "f"), failing)));
        assertEquals(1, runs.get());
    }

    @Test
    void withoutACallIdOrForAnIdempotentOperationEveryCallGoesOn() throws Exception {
        ServerInterceptor.Chain next = c -> runs.incrementAndGet();
        OperationDescriptor echo = ConformanceComponent.DESCRIPTOR.operation("echoDoubles");

        once.intercept(call("grpc", null), next);
        once.intercept(call("grpc", null), next);
        ServerCall idempotent = new ServerCall("Counter", ConformanceComponent.DESCRIPTOR, "grpc", echo, null, "same");
        once.intercept(idempotent, next);
        once.intercept(idempotent, next);

        assertEquals(4, runs.get());
        assertEquals(0, once.remembered(), "nothing held");
    }
}
