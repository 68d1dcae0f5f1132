package io.switchboard.testing.conformance;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;

import io.switchboard.protocol.CallOptions;
import io.switchboard.protocol.ClientSettings;
import io.switchboard.protocol.Endpoint;
import io.switchboard.protocol.ServerCallContext;
import io.switchboard.protocol.ServerSettings;
import io.switchboard.protocol.TraceContext;
import io.switchboard.protocol.spi.ProtocolClient;
import io.switchboard.protocol.spi.ProtocolProvider;
import io.switchboard.protocol.spi.ProtocolServer;
import io.switchboard.protocol.spi.Protocols;
import io.switchboard.testing.CountingSkeleton;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;

/**
 * What every network protocol does with a call's W3C trace context ({@link TraceContext#OPTION}):
 * it reaches the operation's thread ({@link ServerCallContext#trace()}), and a call without one
 * sees none. A protocol's test extends it and adds what a malformed header does on its wire
 * (ignored; the call runs).
 */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
public abstract class AbstractTraceContextTest {
    protected static final String PARENT = "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01";
    /** What the last call's operation saw of its trace context. */
    protected final AtomicReference<TraceContext> seen = new AtomicReference<>();
    private final Map<String, AtomicInteger> served = new ConcurrentHashMap<>();
    private ProtocolServer server;
    private ProtocolClient client;
    private ConformanceStub stub;
    /** The exported conformance component. */
    protected Endpoint endpoint;

    /** The protocol under test, by name. */
    protected abstract String protocolName();

    @BeforeAll
    void start() {
        ProtocolProvider provider = Protocols.get(protocolName());
        server = provider.newServer(ServerSettings.defaults());
        endpoint = server.export(new CountingSkeleton(ConformanceComponent.skeleton(new ConformanceImpl()), "runs",
                served, label -> seen.set(ServerCallContext.trace())));
        client = provider.newClient(ClientSettings.defaults());
        stub = ConformanceComponent.stub(client.connect(ConformanceComponent.DESCRIPTOR, endpoint));
    }

    @AfterAll
    void stop() throws Exception {
        client.close();
        server.close();
    }

    @BeforeEach
    void clear() {
        seen.set(null);
        served.clear();
    }

    /** How many calls the operation ran since the test began. */
    protected int runs() {
        AtomicInteger n = served.get("runs");
        return n == null ? 0 : n.get();
    }

    @Test
    void theTraceContextReachesTheOperationsThread() {
        TraceContext trace = TraceContext.of(PARENT, "congo=t61rcWkgMzE");
        stub.withOptions(CallOptions.DEFAULT.with(TraceContext.OPTION, trace)).ping();
        assertEquals(PARENT, seen.get().traceparent());
        assertEquals("congo=t61rcWkgMzE", seen.get().tracestate());
        stub.ping();
        assertEquals(2, runs());
        assertNull(seen.get(), "a call without one has none: nothing left over from the last call on the thread");
        assertNull(ServerCallContext.trace());
    }
}
