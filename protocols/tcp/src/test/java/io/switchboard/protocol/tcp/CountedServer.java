package io.switchboard.protocol.tcp;

import io.switchboard.protocol.Endpoint;
import io.switchboard.protocol.ServerSettings;
import io.switchboard.testing.CountingSkeleton;
import io.switchboard.testing.conformance.ConformanceComponent;
import io.switchboard.testing.conformance.ConformanceImpl;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicInteger;

/** A tcp server exporting the conformance component, counting the operations that ran: for tests on a raw socket. */
final class CountedServer implements AutoCloseable {
    private final Map<String, AtomicInteger> runs = new ConcurrentHashMap<>();
    private final TcpServer server;
    private final Endpoint endpoint;

    CountedServer(TcpLimits limits) {
        server = new TcpServer(ServerSettings.defaults(), limits);
        endpoint = server.export(new CountingSkeleton(ConformanceComponent.skeleton(new ConformanceImpl()), "runs", runs,
                label -> { }));
    }

    Endpoint endpoint() {
        return endpoint;
    }

    /** Operations that ran, whichever. */
    int runs() {
        AtomicInteger n = runs.get("runs");
        return n == null ? 0 : n.get();
    }

    @Override
    public void close() {
        server.close();
    }
}
