package io.switchboard.protocol.grpc;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.switchboard.idl.runtime.DeclaredFault;
import io.switchboard.idl.runtime.OperationDescriptor;
import io.switchboard.idl.runtime.ServiceDescriptor;
import io.switchboard.protocol.ClientSettings;
import io.switchboard.protocol.Endpoint;
import io.switchboard.protocol.ServerSettings;
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

/**
 * A gRPC server's workers are bounded ({@link ServerSettings#maxConcurrentCalls}): with every
 * worker in a call, one more is refused at once as busy, never run, and the client reads it as
 * not delivered (so a meta-stub may send it elsewhere); once a worker is free, calls run again.
 */
class GrpcBusyServerTest {
    @Test
    void aCallOverTheLimitIsRefusedAsBusyWithoutRunningAndTheNextOneRuns() throws Exception {
        CountDownLatch bothRunning = new CountDownLatch(2);
        CountDownLatch release = new CountDownLatch(1);
        AtomicInteger ran = new AtomicInteger();
        Skeleton inner = ConformanceComponent.skeleton(new ConformanceImpl());
        Skeleton holding = new Skeleton() {
            @Override
            public ServiceDescriptor descriptor() {
                return inner.descriptor();
            }

            @Override
            public Object invoke(OperationDescriptor op, Object request) throws DeclaredFault {
                ran.incrementAndGet();
                if (op.name().equals("ping")) {
                    bothRunning.countDown();
                    try {
                        release.await(30, TimeUnit.SECONDS);
                    } catch (InterruptedException e) {
                        Thread.currentThread().interrupt();
                    }
                }
                return inner.invoke(op, request);
            }
        };
        GrpcServer server = (GrpcServer) new GrpcProtocolProvider().newServer(
                ServerSettings.defaults().withMaxConcurrentCalls(2));
        try (server; ProtocolClient client = new GrpcProtocolProvider().newClient(ClientSettings.defaults())) {
            Endpoint at = server.export(holding);
            try (Transport t = client.connect(ConformanceComponent.DESCRIPTOR, at)) {
                ConformanceStub stub = ConformanceComponent.stub(t);
                CompletableFuture<Void> first = CompletableFuture.runAsync(stub::ping);
                CompletableFuture<Void> second = CompletableFuture.runAsync(stub::ping);
                assertTrue(bothRunning.await(30, TimeUnit.SECONDS), "two calls hold both workers");

                TransportException busy = assertThrows(TransportException.class, () -> stub.echoDoubles(new double[] {1.5}));
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
}
