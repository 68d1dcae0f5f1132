package io.switchboard.metastub;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotSame;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.switchboard.protocol.CallOptions;
import io.switchboard.protocol.ClientSettings;
import io.switchboard.protocol.Endpoint;
import io.switchboard.protocol.ServerSettings;
import io.switchboard.protocol.spi.ProtocolServer;
import io.switchboard.protocol.spi.Protocols;
import io.switchboard.testing.FaultProxy;
import io.switchboard.testing.conformance.ConformanceComponent;
import io.switchboard.testing.conformance.ConformanceImpl;
import io.switchboard.testing.conformance.ConformanceStub;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * Meta-stubs over shared {@link ProtocolClients}: one gRPC connection for every stub to one
 * server address, stubs closed one by one without breaking the others, and everything closed with
 * the clients; a meta-stub built alone keeps clients of its own. Also: the gRPC client's threads
 * come from the settings' executor when one is given, and it is not shut down with the clients.
 */
class SharedClientsTest {
    private ProtocolServer grpc;
    private ProtocolServer soap;
    private FaultProxy proxy;
    private Endpoint endpoint;
    private Endpoint soapEndpoint;

    @BeforeEach
    void start() {
        ConformanceImpl impl = new ConformanceImpl();
        grpc = Protocols.get("grpc").newServer(ServerSettings.defaults());
        soap = Protocols.get("soap").newServer(ServerSettings.defaults());
        endpoint = grpc.export(ConformanceComponent.skeleton(impl));
        soapEndpoint = soap.export(ConformanceComponent.skeleton(impl));
        proxy = FaultProxy.to(endpoint);   // counts the connections made to the gRPC server
    }

    @AfterEach
    void stop() {
        proxy.close();
        grpc.close();
        soap.close();
    }

    /** Calls pinned to gRPC by the policy, through the proxy. */
    private MetaStub stub(ProtocolClients clients) {
        MetaStub.Builder b = MetaStub.builder(ConformanceComponent.DESCRIPTOR).protocols("grpc", "soap")
                .endpoints(List.of(proxy.route(endpoint), soapEndpoint)).policy(new FixedPolicy("grpc"));
        return (clients == null ? b : b.clients(clients)).build();
    }

    @Test
    void stubsOverSharedClientsShareOneConnectionAndOutliveEachOther() {
        try (ProtocolClients clients = new ProtocolClients(ClientSettings.defaults())) {
            MetaStub first = stub(clients);
            MetaStub second = stub(clients);
            ConformanceStub a = ConformanceComponent.stub(first);
            ConformanceStub b = ConformanceComponent.stub(second);
            a.ping();
            b.ping();
            assertSame(clients, first.clients());
            assertSame(first.clients().get("grpc"), second.clients().get("grpc"));
            assertEquals(1, proxy.connections(), "one HTTP/2 connection for both stubs");

            first.close();
            assertEquals(3, b.increment(3), "closing one stub leaves the shared clients to the other");
            assertThrows(IllegalStateException.class, a::ping);

            clients.close();
            assertThrows(IllegalStateException.class, b::ping, "closed with the clients");
        }
    }

    @Test
    void aStubBuiltAloneHasClientsOfItsOwnAndClosesThem() {
        try (MetaStub first = stub(null); MetaStub second = stub(null)) {
            ConformanceComponent.stub(first).ping();
            ConformanceComponent.stub(second).ping();
            assertNotSame(first.clients(), second.clients());
            assertEquals(2, proxy.connections());
            ProtocolClients own = first.clients();
            first.close();
            assertThrows(IllegalStateException.class, () -> own.get("grpc"), "closed with its stub");
            ConformanceComponent.stub(second).ping();
        }
    }

    @Test
    void theGrpcClientReadsOnTheSettingsExecutorAndLeavesItRunning() throws Exception {
        AtomicInteger ran = new AtomicInteger();
        ExecutorService pool = Executors.newFixedThreadPool(2);
        try {
            ProtocolClients clients = new ProtocolClients(ClientSettings.defaults().withExecutor(task -> {
                ran.incrementAndGet();
                pool.execute(task);
            }));
            MetaStub channel = stub(clients);
            CompletableFuture<double[]> echoed = ConformanceComponent.stub(channel)
                    .withOptions(CallOptions.DEFAULT).echoDoublesAsync(new double[] {1, 2, 3});
            assertEquals(3, echoed.get(10, TimeUnit.SECONDS).length);
            assertEquals(1, ran.get(), "the response was read on the given executor");
            channel.close();
            clients.close();
            CountDownLatch stillRuns = new CountDownLatch(1);
            pool.execute(stillRuns::countDown);
            assertTrue(stillRuns.await(10, TimeUnit.SECONDS), "the caller's executor is not shut down");
        } finally {
            pool.shutdown();
        }
    }

    @Test
    void soapAsyncCallsRunOnTheSettingsExecutor() throws Exception {
        AtomicInteger ran = new AtomicInteger();
        ExecutorService pool = Executors.newFixedThreadPool(2);
        try (ProtocolClients clients = new ProtocolClients(ClientSettings.defaults().withExecutor(task -> {
            ran.incrementAndGet();
            pool.execute(task);
        }))) {
            MetaStub channel = stub(clients);
            CompletableFuture<double[]> echoed = ConformanceComponent.stub(channel)
                    .withOptions(CallOptions.DEFAULT.with(MetaStub.PROTOCOL, "soap")).echoDoublesAsync(new double[] {1, 2, 3});
            assertEquals(3, echoed.get(10, TimeUnit.SECONDS).length);
            assertEquals(1, ran.get(), "the SOAP exchange ran on the given executor, not the shared pool");
            channel.close();
        } finally {
            pool.shutdown();
        }
    }

    @Test
    void aSoapAsyncCallTheExecutorRefusesFailsItsFuture() {
        try (ProtocolClients clients = new ProtocolClients(ClientSettings.defaults().withExecutor(task -> {
            throw new java.util.concurrent.RejectedExecutionException("full");
        }))) {
            MetaStub channel = stub(clients);
            CompletableFuture<double[]> echoed = ConformanceComponent.stub(channel)
                    .withOptions(CallOptions.DEFAULT.with(MetaStub.PROTOCOL, "soap")).echoDoublesAsync(new double[] {1});
            java.util.concurrent.ExecutionException e = assertThrows(java.util.concurrent.ExecutionException.class,
                    () -> echoed.get(10, TimeUnit.SECONDS));
            assertTrue(io.switchboard.protocol.AsyncCalls.unwrap(e) instanceof java.util.concurrent.RejectedExecutionException,
                    "refused: " + e.getCause());
            channel.close();
        }
    }
}
