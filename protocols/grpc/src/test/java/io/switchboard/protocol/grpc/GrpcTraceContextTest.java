package io.switchboard.protocol.grpc;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;

import io.grpc.Metadata;
import io.grpc.Status;
import io.switchboard.idl.runtime.OperationDescriptor;
import io.switchboard.protocol.TraceContext;
import io.switchboard.testing.conformance.AbstractTraceContextTest;
import io.switchboard.testing.conformance.ConformanceComponent;
import java.util.List;
import org.junit.jupiter.api.Test;

/** The trace context travels as {@code traceparent}/{@code tracestate} metadata; a bad one is ignored. */
class GrpcTraceContextTest extends AbstractTraceContextTest {
    @Override
    protected String protocolName() {
        return "grpc";
    }

    @Test
    void aMalformedTraceparentIsIgnoredAndTheCallRuns() throws Exception {
        OperationDescriptor ping = ConformanceComponent.DESCRIPTOR.operation("ping");
        Metadata.Key<String> parent = Metadata.Key.of("traceparent", Metadata.ASCII_STRING_MARSHALLER);
        Metadata.Key<String> state = Metadata.Key.of("tracestate", Metadata.ASCII_STRING_MARSHALLER);
        try (RawCalls raw = new RawCalls(endpoint)) {
            for (String bad : new String[] {"00-zz", PARENT + "x", "f".repeat(4000), ""}) {
                Metadata headers = new Metadata();
                headers.put(parent, bad);
                headers.put(state, "a=b");
                assertEquals(Status.Code.OK, raw.call(ping, List.of(new byte[0]), headers).status().getCode(), bad);
                assertNull(seen.get(), bad);
            }
            Metadata good = new Metadata();
            good.put(parent, PARENT);
            good.put(state, "x".repeat(TraceContext.MAX_TRACESTATE + 1));
            assertEquals(Status.Code.OK, raw.call(ping, List.of(new byte[0]), good).status().getCode());
            assertEquals(PARENT, seen.get().traceparent());
            assertNull(seen.get().tracestate(), "a tracestate over the bound is dropped");
        }
        assertEquals(5, runs());
    }
}
