package io.switchboard.protocol.grpc;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.grpc.netty.shaded.io.netty.channel.epoll.Epoll;
import io.switchboard.protocol.ClientSettings;
import io.switchboard.protocol.Endpoint;
import io.switchboard.protocol.ServerSettings;
import io.switchboard.protocol.TransportException;
import io.switchboard.protocol.spi.ProtocolClient;
import io.switchboard.protocol.spi.ProtocolServer;
import io.switchboard.protocol.spi.Transport;
import io.switchboard.protocol.spi.UnixSockets;
import io.switchboard.testing.conformance.AbstractUnixSocketTest;
import io.switchboard.testing.conformance.ConformanceComponent;
import io.switchboard.testing.conformance.ConformanceImpl;
import java.nio.file.Path;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

/**
 * gRPC's Unix socket on the same host: the shared cases ({@link AbstractUnixSocketTest}), and the
 * server's connection limits on the socket, where every connection has the same remote address.
 */
class GrpcUnixSocketTest extends AbstractUnixSocketTest {
    @Override
    protected String protocolName() {
        return "grpc";
    }

    @Override
    protected UnixSockets sockets() {
        return UnixSockets.GRPC;
    }

    @Override
    protected boolean epollAvailable() {
        return Epoll.isAvailable();
    }

    @Override
    protected Path unixSocketOf(ProtocolServer server) {
        return ((GrpcServer) server).unixSocket();
    }

    @Test
    void numbersCrossTheSocketExactly() {
        try (ProtocolServer server = provider.newServer(ServerSettings.defaults())) {
            Endpoint at = server.export(ConformanceComponent.skeleton(new ConformanceImpl()));
            try (Transport t = client.connect(ConformanceComponent.DESCRIPTOR, at)) {
                double[] values = {-0.0, Double.NaN, Double.NEGATIVE_INFINITY, Double.MIN_VALUE};
                assertArrayEquals(values, ConformanceComponent.stub(t).echoDoubles(values));
                double[] large = new double[3_000_000];   // 24 MB: many parts each way
                for (int i = 0; i < large.length; i++) {
                    large[i] = i * 0.5 - 1e6;
                }
                assertArrayEquals(large, ConformanceComponent.stub(t).echoDoubles(large));
                assertEquals(UnixSockets.VIA_UNIX, t.via());
            }
        }
    }

    @Test
    void theSocketsConnectionsShareTheServersLimitsAndAWorkingOneIsNotDisplaced() throws Exception {
        ConformanceImpl impl = new ConformanceImpl();
        try (GrpcServer server = (GrpcServer) provider.newServer(ServerSettings.defaults().withMaxConnectionsPerAddress(1));
             ProtocolClient late = provider.newClient(ClientSettings.defaults())) {
            Endpoint at = server.export(ConformanceComponent.skeleton(impl));
            try (Transport busy = client.connect(ConformanceComponent.DESCRIPTOR, at);
                 Transport refused = late.connect(ConformanceComponent.DESCRIPTOR, at)) {
                assertEquals(UnixSockets.VIA_UNIX, busy.via());
                CompletableFuture<Long> spinning = CompletableFuture.supplyAsync(
                        () -> ConformanceComponent.stub(busy).spin(new double[0], 600_000_000));
                assertTrue(impl.spinStarted.await(30, TimeUnit.SECONDS));
                // the client tried the socket once before its channel connected: that probe is gone
                GrpcConnectionShares shares = server.connections();
                long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(30);
                while (shares.open() != 1) {
                    assertTrue(System.nanoTime() < deadline, shares.open() + " connections open");
                    Thread.sleep(1);
                }
                long evicted = shares.evictions();
                // every connection over the socket counts as this host's one address: its only one works
                assertThrows(TransportException.class, () -> ConformanceComponent.stub(refused).ping());
                assertTrue(shares.refusals() >= 1);
                assertEquals(evicted, shares.evictions(), "the working connection was not displaced");
                assertEquals(1, impl.spinSawCancel.getCount(), "its call runs on");
                spinning.cancel(true);
            }
        }
    }
}
