package io.switchboard.protocol.grpc;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.switchboard.protocol.ClientSettings;
import io.switchboard.protocol.Endpoint;
import io.switchboard.protocol.spi.ProtocolClient;
import io.switchboard.protocol.spi.ProtocolServer;
import io.switchboard.protocol.ServerSettings;
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
 * Netty's event loop they cost no thread, and a well-behaved call still succeeds.
 */
class GrpcConnectionFloodTest {
    @Test
    void fiveHundredIdleConnectionsDoNotStopAGoodCall() throws Exception {
        List<Socket> flood = new ArrayList<>();
        try (ProtocolServer server = new GrpcProtocolProvider().newServer(ServerSettings.defaults());
             ProtocolClient client = new GrpcProtocolProvider().newClient(ClientSettings.defaults())) {
            Endpoint at = server.export(ConformanceComponent.skeleton(new ConformanceImpl()));
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
