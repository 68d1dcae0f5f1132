package io.switchboard.server;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import io.switchboard.idl.runtime.OperationDescriptor;
import io.switchboard.metastub.MetaStub;
import io.switchboard.protocol.CallOptions;
import io.switchboard.protocol.RemoteInvocationException;
import io.switchboard.protocol.ServerInterceptor;
import io.switchboard.protocol.ServerInterceptorChain;
import io.switchboard.protocol.Skeleton;
import io.switchboard.protocol.spi.DeduplicatingInterceptor;
import io.switchboard.registry.CallSummary;
import io.switchboard.registry.ComponentEntry;
import io.switchboard.testing.conformance.ConformanceComponent;
import io.switchboard.testing.conformance.ConformanceImpl;
import io.switchboard.testing.conformance.ConformanceStub;
import io.switchboard.testing.conformance.Increment;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;

/** A user's own server step, added with {@code ComponentServer.Builder.interceptor}, over real gRPC and SOAP listeners. */
class ServerInterceptorTest {
    private static final OperationDescriptor INCREMENT = ConformanceComponent.DESCRIPTOR.operation("increment");

    @Test
    void aUserInterceptorSeesEachCallAndItsRefusalReachesTheClient() {
        List<String> seen = new CopyOnWriteArrayList<>();
        ServerInterceptor readOnlyOverSoap = (call, next) -> {
            seen.add(call.protocol() + " " + call.component() + "." + call.operation().name()
                    + (call.callId() == null ? "" : " with a call id"));
            if (call.protocol().equals("soap") && !call.operation().idempotent()) {
                throw new SecurityException(call.operation().name() + " is refused over soap: read-only there");
            }
            return next.proceed(call);
        };
        ConformanceImpl impl = new ConformanceImpl();
        try (ComponentServer server = ComponentServer.builder().protocols("grpc", "soap")
                .interceptor(readOnlyOverSoap).build()) {
            ComponentEntry entry = server.export("Counter", ConformanceComponent.skeleton(impl));
            MetaStub channel = MetaStub.builder(ConformanceComponent.DESCRIPTOR).endpoints(entry.endpoints()).build();
            ConformanceStub grpc = ConformanceComponent.stub(channel).withOptions(CallOptions.DEFAULT.with(MetaStub.PROTOCOL, "grpc"));
            ConformanceStub soap = ConformanceComponent.stub(channel).withOptions(CallOptions.DEFAULT.with(MetaStub.PROTOCOL, "soap"));
            try (channel) {
                assertEquals(2, grpc.increment(2));
                assertEquals(4.5, soap.echoDoubles(new double[] {4.5})[0], "an idempotent call passes over soap");
                RemoteInvocationException refused = assertThrows(RemoteInvocationException.class, () -> soap.increment(5));
                assertTrue(refused.getMessage().contains("increment is refused over soap: read-only there"),
                        refused.getMessage());
            }

            assertEquals(List.of("grpc Counter.increment with a call id", "soap Counter.echoDoubles with a call id",
                    "soap Counter.increment with a call id"), seen);
            assertEquals(2, impl.total.get(), "the refused call never reached the implementation");
            CallSummary.Row row = server.callStats().summary("Counter").row("increment", "soap");
            assertEquals(1, row.errors(), "the refusal is in the call figures: the step runs inside them");
        }
    }

    @Test
    void aUserInterceptorRunsOncePerCallIdAndItsRefusalIsTheRepeatsAnswerToo() throws Exception {
        AtomicInteger runs = new AtomicInteger();
        ServerInterceptor quota = (call, next) -> {
            if (runs.incrementAndGet() > 1) {
                throw new IllegalStateException("quota used up");
            }
            throw new SecurityException("not today");
        };
        ServerCallStats stats = new ServerCallStats(new SimpleMeterRegistry());
        // the chain ComponentServer exports, without tracing: counting, de-duplicator, then the user's step
        List<ServerInterceptor> steps = ComponentServer.chain(null, stats,
                new DeduplicatingInterceptor(1 << 20, Duration.ofMinutes(1)), new DrainingInterceptor(), List.of(quota));
        ConformanceImpl impl = new ConformanceImpl();
        Skeleton grpc = ServerInterceptorChain.of("Counter", "grpc", steps, ConformanceComponent.skeleton(impl));
        Skeleton soap = ServerInterceptorChain.of("Counter", "soap", steps, ConformanceComponent.skeleton(impl));
        Increment by = new Increment();
        by.setBy(1);

        assertEquals("not today", assertThrows(SecurityException.class, () -> grpc.invoke(INCREMENT, by, "id-1")).getMessage());
        assertEquals("not today", assertThrows(SecurityException.class, () -> soap.invoke(INCREMENT, by, "id-1")).getMessage(),
                "the failsafe's repeat over SOAP gets the first answer");

        assertEquals(1, runs.get(), "the step ran once for the call id");
        assertEquals(0, impl.increments.get());
        assertEquals(1, stats.summary("Counter").row("increment", "soap").repeats());
    }
}
