package io.switchboard.protocol.grpc;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import io.grpc.netty.shaded.io.netty.channel.epoll.Epoll;
import io.switchboard.idl.runtime.DeclaredFault;
import io.switchboard.idl.runtime.OperationDescriptor;
import io.switchboard.idl.runtime.ServiceDescriptor;
import io.switchboard.protocol.ClientSettings;
import io.switchboard.protocol.Endpoint;
import io.switchboard.protocol.ServerSettings;
import io.switchboard.protocol.spi.UnixSockets;
import io.switchboard.protocol.Skeleton;
import io.switchboard.protocol.TransportException;
import io.switchboard.protocol.spi.ProtocolClient;
import io.switchboard.protocol.spi.Transport;
import io.switchboard.testing.conformance.ConformanceComponent;
import io.switchboard.testing.conformance.ConformanceImpl;
import io.switchboard.testing.conformance.ConformanceStub;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * A gRPC server's workers are bounded ({@link ServerSettings#maxConcurrentCalls}), and one
 * connection runs at most half of them: with every worker in a call, or the connection's share,
 * one more is refused at once as busy, never run, and the client reads it as not delivered (so a
 * meta-stub may send it elsewhere); once a worker is free, calls run again.
 */
class GrpcBusyServerTest {
    private final AtomicInteger ran = new AtomicInteger();
    private final CountDownLatch release = new CountDownLatch(1);

    /** The conformance component, its pings held until {@link #release} and counted down on {@code running}. */
    private Skeleton holding(CountDownLatch running) {
        Skeleton inner = ConformanceComponent.skeleton(new ConformanceImpl());
        return new Skeleton() {
            @Override
            public ServiceDescriptor descriptor() {
                return inner.descriptor();
            }

            @Override
            public Object invoke(OperationDescriptor op, Object request) throws DeclaredFault {
                ran.incrementAndGet();
                if (op.name().equals("ping")) {
                    running.countDown();
                    try {
                        release.await(30, TimeUnit.SECONDS);
                    } catch (InterruptedException e) {
                        Thread.currentThread().interrupt();
                    }
                }
                return inner.invoke(op, request);
            }
        };
    }

    @Test
    void aCallOverTheLimitIsRefusedAsBusyWithoutRunningAndTheNextOneRuns() throws Exception {
        CountDownLatch bothRunning = new CountDownLatch(2);
        GrpcServer server = (GrpcServer) new GrpcProtocolProvider().newServer(
                ServerSettings.defaults().withMaxConcurrentCalls(2));
        // a connection per call: one connection runs at most half the server's calls
        try (server; ProtocolClient one = new GrpcProtocolProvider().newClient(ClientSettings.defaults());
             ProtocolClient other = new GrpcProtocolProvider().newClient(ClientSettings.defaults());
             ProtocolClient third = new GrpcProtocolProvider().newClient(ClientSettings.defaults())) {
            Endpoint at = server.export(holding(bothRunning));
            try (Transport t = one.connect(ConformanceComponent.DESCRIPTOR, at);
                 Transport u = other.connect(ConformanceComponent.DESCRIPTOR, at);
                 Transport v = third.connect(ConformanceComponent.DESCRIPTOR, at)) {
                ConformanceStub stub = ConformanceComponent.stub(t);
                ConformanceStub otherStub = ConformanceComponent.stub(u);
                CompletableFuture<Void> first = CompletableFuture.runAsync(stub::ping);
                CompletableFuture<Void> second = CompletableFuture.runAsync(otherStub::ping);
                assertTrue(bothRunning.await(30, TimeUnit.SECONDS), "two calls hold both workers");

                TransportException busy = assertThrows(TransportException.class,
                        () -> ConformanceComponent.stub(v).echoDoubles(new double[] {1.5}));
                assertEquals(TransportException.Delivery.NOT_DELIVERED, busy.delivery(), busy.toString());
                assertTrue(busy.getMessage().contains("server busy: all 2 call workers"), busy.getMessage());
                assertEquals(2, ran.get(), "the refused call did not run");
                assertEquals(1, server.busyRefusals());

                release.countDown();
                first.get(30, TimeUnit.SECONDS);
                second.get(30, TimeUnit.SECONDS);
                double[] values = {-0.0, Double.NaN, Double.POSITIVE_INFINITY};
                assertArrayEquals(values, stub.echoDoubles(values), "with a worker free, calls run again");
                assertEquals(3, ran.get());
            }
        } finally {
            release.countDown();
        }
    }

    /** Over TCP, and over the server's Unix socket, where every connection has the same (empty) remote address. */
    @ParameterizedTest(name = "over the Unix socket: {0}")
    @ValueSource(booleans = {false, true})
    void oneConnectionRunsAtMostHalfTheServersCallsAndAnotherConnectionsCallStillRuns(boolean unix) throws Exception {
        assumeTrue(!unix || Epoll.isAvailable(), "epoll (Linux) is not available");
        CountDownLatch twoRunning = new CountDownLatch(2);
        GrpcServer server = (GrpcServer) new GrpcProtocolProvider().newServer(
                ServerSettings.defaults().withMaxConcurrentCalls(4));
        try (server; ProtocolClient greedy = new GrpcProtocolProvider().newClient(ClientSettings.defaults());
             ProtocolClient other = new GrpcProtocolProvider().newClient(ClientSettings.defaults())) {
            Endpoint served = server.export(holding(twoRunning));
            Endpoint at = unix ? served : UnixSockets.overTcp(served);
            try (Transport t = greedy.connect(ConformanceComponent.DESCRIPTOR, at);
                 Transport u = other.connect(ConformanceComponent.DESCRIPTOR, at)) {
                assertEquals(unix ? UnixSockets.VIA_UNIX : UnixSockets.VIA_TCP, t.via());
                ConformanceStub stub = ConformanceComponent.stub(t);
                CompletableFuture<Void> first = CompletableFuture.runAsync(stub::ping);
                CompletableFuture<Void> second = CompletableFuture.runAsync(stub::ping);
                assertTrue(twoRunning.await(30, TimeUnit.SECONDS), "one connection runs two calls, its share");

                TransportException busy = assertThrows(TransportException.class, () -> stub.echoDoubles(new double[] {1.5}));
                assertEquals(TransportException.Delivery.NOT_DELIVERED, busy.delivery(), busy.toString());
                assertTrue(busy.getMessage().contains("this connection runs 2 calls, its limit"), busy.getMessage());
                assertEquals(2, ran.get(), "the refused call did not run");

                double[] values = {-0.0, Double.NaN, Double.NEGATIVE_INFINITY, Double.MIN_VALUE};
                assertArrayEquals(values, ConformanceComponent.stub(u).echoDoubles(values),
                        "another connection's call runs on the workers left");
                assertEquals(3, ran.get());
                assertEquals(1, server.busyRefusals());

                release.countDown();
                first.get(30, TimeUnit.SECONDS);
                second.get(30, TimeUnit.SECONDS);
                assertArrayEquals(values, stub.echoDoubles(values), "its calls done, the connection runs calls again");
            }
        } finally {
            release.countDown();
        }
    }
}
