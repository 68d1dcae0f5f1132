package io.switchboard.protocol.grpc;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;

import io.grpc.Metadata;
import io.grpc.Status;
import io.switchboard.codec.message.WireFormatException;
import io.switchboard.protocol.RefusedException;
import io.switchboard.protocol.TransportException;
import org.junit.jupiter.api.Test;

/**
 * How a client reads the statuses that say "refused before it ran" apart from those that say
 * "your request": a busy server's answer is not delivered (the failsafe and failover may repeat
 * it), a size refusal is an answer (never repeated). grpcio's words for its busy server are pinned
 * by the Python package's {@code test_grpc_calls_beyond_the_bounded_queue_are_refused_at_once}.
 */
class GrpcErrorsTest {
    @Test
    void grpciosConcurrentCallLimitIsABusyServerNotASizeRefusal() {
        TransportException busy = assertInstanceOf(TransportException.class, GrpcErrors.toException(
                Status.RESOURCE_EXHAUSTED.withDescription("Concurrent RPC limit exceeded!"), new Metadata(),
                "Echo.divide", "grpc://127.0.0.1:1/Echo"));
        assertEquals(TransportException.Delivery.NOT_DELIVERED, busy.delivery(), busy.getMessage());
    }

    @Test
    void anotherResourceExhaustedIsStillASizeRefusal() {
        RefusedException refused = assertInstanceOf(RefusedException.class, GrpcErrors.toException(
                Status.RESOURCE_EXHAUSTED.withDescription("gRPC message exceeds maximum size 4194304: 5000000"),
                new Metadata(), "Echo.echoDoubles", "grpc://127.0.0.1:1/Echo"));
        assertEquals(WireFormatException.SIZE_LIMIT, refused.reason());
    }

    @Test
    void aBusyTrailerIsNotDeliveredWhateverTheStatusSays() {
        Metadata trailers = new Metadata();
        trailers.put(GrpcErrors.BUSY, "connections");
        TransportException busy = assertInstanceOf(TransportException.class, GrpcErrors.toException(
                Status.UNAVAILABLE.withDescription("server busy: 1 connections from /127.0.0.1 are open and working, "
                        + "the limit per address; the call did not run"), trailers, "Echo.empty", "grpc://127.0.0.1:1/Echo"));
        assertEquals(TransportException.Delivery.NOT_DELIVERED, busy.delivery());
    }
}
