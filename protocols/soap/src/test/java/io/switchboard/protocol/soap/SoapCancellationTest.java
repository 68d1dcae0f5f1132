package io.switchboard.protocol.soap;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.switchboard.protocol.ClientSettings;
import io.switchboard.protocol.spi.ProtocolServer;
import io.switchboard.protocol.ServerSettings;
import io.switchboard.protocol.spi.Transport;
import io.switchboard.testing.conformance.ConformanceComponent;
import io.switchboard.testing.conformance.ConformanceImpl;
import io.switchboard.testing.conformance.ConformanceStub;
import java.time.Duration;
import java.util.concurrent.CancellationException;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

/**
 * Cancelling an async SOAP call aborts its HTTP exchange, so the client's connection is given up
 * at once, and sends the server a cancel message naming the call id, so the operation sees its
 * call cancelled ({@code ServerCallContext.isCancelled()}) and stops.
 */
class SoapCancellationTest {
    @Test
    void cancellingAnAsyncCallAbortsItsHttpExchangeAndStopsTheOperation() throws Exception {
        ConformanceImpl impl = new ConformanceImpl();
        SoapProtocolProvider provider = new SoapProtocolProvider();
        try (ProtocolServer server = provider.newServer(ServerSettings.defaults());
             // a call timeout far beyond the test's wait: only an abort can free the connection in time
             SoapClient client = (SoapClient) provider.newClient(ClientSettings.defaults()
                     .withCallTimeout(Duration.ofMinutes(30)))) {
            Transport transport = client.connect(ConformanceComponent.DESCRIPTOR,
                    server.export(ConformanceComponent.skeleton(impl)));
            ConformanceStub stub = ConformanceComponent.stub(transport);
            try {
                CompletableFuture<Long> spin = stub.spinAsync(new double[100], Integer.MAX_VALUE);
                assertTrue(impl.spinStarted.await(1, TimeUnit.MINUTES), "the work never started");
                assertEquals(1, client.leasedConnections(), "the call holds its connection while it waits");
                assertTrue(spin.cancel(true));
                assertThrows(CancellationException.class, spin::join);
                long deadline = System.nanoTime() + TimeUnit.MINUTES.toNanos(2);
                while (client.leasedConnections() > 0) {   // only the abort frees it this soon
                    assertTrue(System.nanoTime() < deadline, "the cancelled call still holds its HTTP connection");
                    Thread.sleep(10);
                }
                assertTrue(impl.spinSawCancel.await(1, TimeUnit.MINUTES), "the cancel message reached the operation");
                stub.ping();   // the client still works, on a new connection
            } finally {
                impl.stopSpinning = true;
            }
        }
    }
}
