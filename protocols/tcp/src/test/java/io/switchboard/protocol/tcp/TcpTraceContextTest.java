package io.switchboard.protocol.tcp;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;

import io.switchboard.codec.proto.ProtoSchemas;
import io.switchboard.protocol.TraceContext;
import io.switchboard.testing.conformance.AbstractTraceContextTest;
import io.switchboard.testing.conformance.ConformanceComponent;
import java.util.Map;
import org.junit.jupiter.api.Test;

/** The trace context travels as the {@code traceparent}/{@code tracestate} user fields; a bad one is ignored. */
class TcpTraceContextTest extends AbstractTraceContextTest {
    @Override
    protected String protocolName() {
        return "tcp";
    }

    @Test
    void aMalformedTraceparentIsIgnoredAndTheCallRuns() throws Exception {
        String service = ProtoSchemas.serviceName(ConformanceComponent.DESCRIPTOR.name());
        try (RawTcp raw = new RawTcp(endpoint)) {
            long id = 1;
            for (String bad : new String[] {"00-zz", PARENT + "x", "f".repeat(4000), ""}) {
                RawTcp.Answer a = raw.call(RpcMeta.request(service, "ping", null, 0, id++,
                        Map.of(TraceContext.TRACEPARENT, bad, TraceContext.TRACESTATE, "a=b")), new byte[0]);
                assertEquals(0, a.meta().errorCode(), bad);
                assertNull(seen.get(), bad);
            }
            RawTcp.Answer a = raw.call(RpcMeta.request(service, "ping", null, 0, id, Map.of(TraceContext.TRACEPARENT,
                    PARENT, TraceContext.TRACESTATE, "x".repeat(TraceContext.MAX_TRACESTATE + 1))), new byte[0]);
            assertEquals(0, a.meta().errorCode());
            assertEquals(PARENT, seen.get().traceparent());
            assertNull(seen.get().tracestate(), "a tracestate over the bound is dropped");
        }
        assertEquals(5, runs());
    }
}
