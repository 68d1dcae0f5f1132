package io.switchboard.protocol.grpc;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.switchboard.protocol.ClientSettings;
import io.switchboard.protocol.Endpoint;
import io.switchboard.protocol.spi.ProtocolClient;
import io.switchboard.protocol.spi.ProtocolServer;
import io.switchboard.protocol.ServerSettings;
import io.switchboard.protocol.spi.UnixSockets;
import io.switchboard.protocol.spi.Transport;
import io.switchboard.testing.conformance.ConformanceComponent;
import io.switchboard.testing.conformance.ConformanceStub;
import io.switchboard.testing.conformance.ConformanceImpl;
import java.net.Socket;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;

/**
 * A flood of idle TCP connections (never sending the HTTP/2 preface) against a gRPC server: on
 * Netty's event loop they cost no thread, they cost their own address its oldest connections, and
 * a well-behaved call from the same host still succeeds at once.
 */
class GrpcConnectionFloodTest {
    @Test
    void sixHundredIdleConnectionsFromOneAddressMakeWayForAClientOfTheSameHost() throws Exception {
        int flood = 600;
        int perAddress = ServerSettings.defaults().maxConnectionsPerAddress();
        List<Socket> sockets = new ArrayList<>();
        try (ProtocolServer server = new GrpcProtocolProvider().newServer(ServerSettings.defaults());
             ProtocolClient client = new GrpcProtocolProvider().newClient(ClientSettings.defaults())) {
            Endpoint at = UnixSockets.overTcp(server.export(ConformanceComponent.skeleton(new ConformanceImpl())));
            GrpcConnectionShares shares = ((GrpcServer) server).connections();
            for (int i = 0; i < flood; i++) {
                sockets.add(new Socket(at.uri().getHost(), at.uri().getPort()));
            }
            long deadline = System.nanoTime() + java.util.concurrent.TimeUnit.SECONDS.toNanos(60);
            while (shares.evictions() < flood - perAddress) {   // every one seen: the good client is the newest
                assertTrue(System.nanoTime() < deadline, shares.evictions() + " evicted");
                Thread.sleep(1);
            }
            assertTrue(shares.open() <= perAddress, shares.open() + " open");
            assertEquals(0, shares.refusals());
            assertEquals(shares.evictions(), server.shedConnections(), "every displaced connection counts as shed");
            long start = System.nanoTime();
            try (Transport t = client.connect(ConformanceComponent.DESCRIPTOR, at)) {
                double[] values = {1.5, -0.0, Double.NaN};
                assertArrayEquals(values, ConformanceComponent.stub(t).echoDoubles(values));
            }
            long ms = java.util.concurrent.TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - start);
            assertTrue(ms < 2000, "the good call took " + ms + " ms");
        } finally {
            for (Socket s : sockets) {
                s.close();
            }
        }
    }

    @Test
    void aNewcomerIsRefusedWhenEveryConnectionOfItsAddressHasCallsOpen() throws Exception {
        ConformanceImpl impl = new ConformanceImpl();
        try (ProtocolServer server = new GrpcProtocolProvider().newServer(ServerSettings.defaults()
                .withMaxConnectionsPerAddress(1));
             ProtocolClient first = new GrpcProtocolProvider().newClient(ClientSettings.defaults());
             ProtocolClient second = new GrpcProtocolProvider().newClient(ClientSettings.defaults())) {
            Endpoint at = UnixSockets.overTcp(server.export(ConformanceComponent.skeleton(impl)));
            GrpcConnectionShares shares = ((GrpcServer) server).connections();
            try (Transport busy = first.connect(ConformanceComponent.DESCRIPTOR, at);
                 Transport late = second.connect(ConformanceComponent.DESCRIPTOR, at)) {
                java.util.concurrent.CompletableFuture<Long> spinning = java.util.concurrent.CompletableFuture
                        .supplyAsync(() -> ConformanceComponent.stub(busy).spin(new double[0], 600_000_000));
                assertTrue(impl.spinStarted.await(30, java.util.concurrent.TimeUnit.SECONDS));
                io.switchboard.protocol.TransportException refused = org.junit.jupiter.api.Assertions.assertThrows(
                        io.switchboard.protocol.TransportException.class, () -> ConformanceComponent.stub(late).ping(),
                        "no connection of the address is idle");
                // answered, not cut off: the client knows the call never ran, and may take it elsewhere
                assertEquals(io.switchboard.protocol.TransportException.Delivery.NOT_DELIVERED, refused.delivery(),
                        refused.getMessage());
                assertTrue(refused.getMessage().contains("server busy") && refused.getMessage().contains("did not run"),
                        refused.getMessage());
                assertTrue(shares.refusals() >= 1);
                assertEquals(0, shares.evictions(), "the working connection was not closed");
                assertEquals(shares.refusals(), server.shedConnections(), "every refused connection counts as shed");
                awaitNoneAnswering(shares);
                spinning.cancel(true);
            }
        }
    }

    @Test
    void refusedConnectionsThatSendNothingAreFewAtATimeAndAllClosed() throws Exception {
        ConformanceImpl impl = new ConformanceImpl();
        List<Socket> flood = new ArrayList<>();
        try (ProtocolServer server = new GrpcProtocolProvider().newServer(ServerSettings.defaults()
                .withMaxConnectionsPerAddress(1));
             ProtocolClient client = new GrpcProtocolProvider().newClient(ClientSettings.defaults())) {
            Endpoint at = UnixSockets.overTcp(server.export(ConformanceComponent.skeleton(impl)));
            GrpcConnectionShares shares = ((GrpcServer) server).connections();
            try (Transport busy = client.connect(ConformanceComponent.DESCRIPTOR, at)) {
                java.util.concurrent.CompletableFuture<Long> spinning = java.util.concurrent.CompletableFuture
                        .supplyAsync(() -> ConformanceComponent.stub(busy).spin(new double[0], 600_000_000));
                assertTrue(impl.spinStarted.await(30, java.util.concurrent.TimeUnit.SECONDS));
                int n = 3 * io.switchboard.protocol.spi.ConnectionShares.MAX_REFUSED_ANSWERING;
                for (int i = 0; i < n; i++) {
                    Socket s = new Socket(at.uri().getHost(), at.uri().getPort());
                    s.setSoTimeout(30_000);
                    flood.add(s);
                }
                long deadline = System.nanoTime() + java.util.concurrent.TimeUnit.SECONDS.toNanos(30);
                while (shares.refusals() < n) {
                    assertTrue(System.nanoTime() < deadline, shares.refusals() + " refused");
                    assertTrue(shares.refusedAnswering() <= io.switchboard.protocol.spi.ConnectionShares.MAX_REFUSED_ANSWERING,
                            shares.refusedAnswering() + " refused connections answering");
                    Thread.sleep(1);
                }
                assertTrue(shares.refusedAnswering() <= io.switchboard.protocol.spi.ConnectionShares.MAX_REFUSED_ANSWERING);
                int cutAtOnce = 0;
                for (Socket s : flood) {   // each closed by the server: at once, or after its lifetime
                    byte[] got = s.getInputStream().readAllBytes();   // the read times out unless it is closed
                    if (got.length == 0) {
                        cutAtOnce++;   // gRPC never saw it: those answering send their HTTP/2 settings first
                    }
                }
                assertTrue(cutAtOnce >= n - io.switchboard.protocol.spi.ConnectionShares.MAX_REFUSED_ANSWERING, cutAtOnce + " closed at once");
                awaitNoneAnswering(shares);
                assertEquals(0, shares.evictions(), "the working connection was not closed");
                spinning.cancel(true);
            }
        } finally {
            for (Socket s : flood) {
                s.close();
            }
        }
    }

    /** Until the refused connections answering as busy are all closed (their lifetime is bounded). */
    private static void awaitNoneAnswering(GrpcConnectionShares shares) throws InterruptedException {
        long deadline = System.nanoTime() + java.util.concurrent.TimeUnit.SECONDS.toNanos(30);
        while (shares.refusedAnswering() > 0) {
            assertTrue(System.nanoTime() < deadline, shares.refusedAnswering() + " refused connections still open");
            Thread.sleep(1);
        }
    }

    @Test
    void fiveHundredIdleConnectionsDoNotStopAGoodCall() throws Exception {
        List<Socket> flood = new ArrayList<>();
        try (ProtocolServer server = new GrpcProtocolProvider().newServer(ServerSettings.defaults());
             ProtocolClient client = new GrpcProtocolProvider().newClient(ClientSettings.defaults())) {
            Endpoint at = UnixSockets.overTcp(server.export(ConformanceComponent.skeleton(new ConformanceImpl())));
            int threadsBefore = Thread.activeCount();
            for (int i = 0; i < 500; i++) {
                flood.add(new Socket(at.uri().getHost(), at.uri().getPort()));
            }
            try (Transport t = client.connect(ConformanceComponent.DESCRIPTOR, at)) {
                ConformanceStub stub = ConformanceComponent.stub(t);
                double[] values = {1.5, -0.0, Double.NaN};
                assertArrayEquals(values, stub.echoDoubles(values));
            }
            int threadsAfter = Thread.activeCount();
            System.out.println("gRPC flood: 500 idle connections, threads " + threadsBefore + " -> " + threadsAfter);
            assertTrue(threadsAfter < threadsBefore + 50, "threads " + threadsBefore + " -> " + threadsAfter);
        } finally {
            for (Socket s : flood) {
                s.close();
            }
        }
    }
}
