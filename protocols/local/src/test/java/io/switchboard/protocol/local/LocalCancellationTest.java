package io.switchboard.protocol.local;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.switchboard.protocol.CallOptions;
import io.switchboard.protocol.ClientSettings;
import io.switchboard.protocol.DeadlineExceededException;
import io.switchboard.protocol.TransportException;
import io.switchboard.protocol.spi.ProtocolClient;
import io.switchboard.protocol.spi.ProtocolServer;
import io.switchboard.protocol.spi.Protocols;
import io.switchboard.protocol.ServerSettings;
import io.switchboard.testing.conformance.ConformanceComponent;
import io.switchboard.testing.conformance.ConformanceImpl;
import io.switchboard.testing.conformance.ConformanceStub;
import java.util.concurrent.CancellationException;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * Cancelling an async local call interrupts the component's thread, which ServerCallContext
 * reports; a call whose deadline has passed is refused before the component runs.
 */
class LocalCancellationTest {
    private final ConformanceImpl impl = new ConformanceImpl();
    private final ProtocolServer server = Protocols.get("local").newServer(ServerSettings.defaults());
    private final ProtocolClient client = Protocols.get("local").newClient(ClientSettings.defaults());
    private final ConformanceStub stub = ConformanceComponent.stub(client.connect(ConformanceComponent.DESCRIPTOR,
            server.export(ConformanceComponent.skeleton(impl))));

    @AfterEach
    void close() {
        client.close();
        server.close();
    }

    @Test
    void cancellingAnAsyncCallStopsTheComponentsWork() throws Exception {
        CompletableFuture<Long> spin = stub.spinAsync(new double[1000], Integer.MAX_VALUE);
        assertTrue(impl.spinStarted.await(1, TimeUnit.MINUTES), "the work never started");
        assertTrue(spin.cancel(true));
        assertThrows(CancellationException.class, spin::join);
        assertTrue(impl.spinSawCancel.await(1, TimeUnit.MINUTES), "the component never saw the cancellation");
    }

    /**
     * An operation that stops at its deadline and returns what it has: the caller gets the
     * deadline's failure, not the result. It got the result, and a chain of hops
     * (CallAcrossHopsTest, on a loaded machine) handed it back to its first caller as an answer.
     */
    @Test
    void anOperationThatReturnsPastItsDeadlineFailsTheCall() {
        DeadlineExceededException e = assertThrows(DeadlineExceededException.class, () -> stub.withOptions(
                CallOptions.DEFAULT.withDeadlineNanoTime(System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(50)))
                .spin(new double[1], Integer.MAX_VALUE));
        assertEquals(TransportException.Delivery.MAY_HAVE_RUN, e.delivery());
        assertEquals(0, impl.spinSawCancel.getCount(), "the operation saw its deadline and returned");
    }

    @Test
    void aCallWhoseDeadlineHasPassedIsRefusedAndDoesNotRun() {
        DeadlineExceededException e = assertThrows(DeadlineExceededException.class, () -> stub.withOptions(
                CallOptions.DEFAULT.withDeadlineNanoTime(System.nanoTime() - 1)).increment(1));
        assertEquals(TransportException.Delivery.NOT_DELIVERED, e.delivery());
        assertEquals(0, impl.increments.get(), "the component did not run");
    }
}
