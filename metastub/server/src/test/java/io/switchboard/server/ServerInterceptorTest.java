package io.switchboard.server;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.switchboard.metastub.MetaStub;
import io.switchboard.protocol.CallOptions;
import io.switchboard.protocol.RemoteInvocationException;
import io.switchboard.protocol.ServerInterceptor;
import io.switchboard.registry.CallSummary;
import io.switchboard.registry.ComponentEntry;
import io.switchboard.testing.conformance.ConformanceComponent;
import io.switchboard.testing.conformance.ConformanceImpl;
import io.switchboard.testing.conformance.ConformanceStub;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import org.junit.jupiter.api.Test;

/** A user's own server step, added with {@code ComponentServer.Builder.interceptor}, over real gRPC and SOAP listeners. */
class ServerInterceptorTest {
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
}
