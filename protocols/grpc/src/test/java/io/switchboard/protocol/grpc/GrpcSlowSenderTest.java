package io.switchboard.protocol.grpc;

import io.switchboard.codec.binary.BinaryCodec;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.grpc.ClientCall;
import io.grpc.ManagedChannel;
import io.grpc.Metadata;
import io.grpc.Status;
import io.grpc.netty.shaded.io.grpc.netty.NettyChannelBuilder;
import io.switchboard.idl.runtime.OperationDescriptor;
import io.switchboard.codec.binary.BinaryWriter;
import io.switchboard.protocol.Endpoint;
import io.switchboard.protocol.ServerSettings;
import io.switchboard.testing.conformance.ConformanceComponent;
import io.switchboard.testing.conformance.ConformanceImpl;
import io.switchboard.testing.conformance.EchoDoubles;
import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * A slow sender on the bulk protocol: a client that keeps a request alive with one byte every
 * 300 ms, each in its own chunk, so that no single wait reaches the server's idle timeout. The
 * server must end the call, and free the worker thread that decodes it, within a bound of the
 * idle timeout (2 s here) rather than whenever the sender stops; the call is cut after 25 s
 * either way, so the test ends. Both ways a server reads a request: by a worker thread taking its
 * parts (no size announced), and on arrival (a size over one part announced: the minimum rate then
 * bounds the call by that size, 2 MiB at 1 MiB/s here, plus the idle time).
 */
class GrpcSlowSenderTest {
    private static final Duration IDLE = Duration.ofSeconds(2);

    @ParameterizedTest(name = "size announced: {0}")
    @ValueSource(booleans = {false, true})
    void aSenderTricklingOneByteAtATimeIsCutOffAndItsWorkerThreadFreed(boolean announced) throws Exception {
        GrpcServer server = (GrpcServer) new GrpcProtocolProvider().newServer(ServerSettings.defaults()
                .withIdleTimeout(IDLE).withMinRequestBytesPerSecond(1 << 20));
        Endpoint at = server.export(ConformanceComponent.skeleton(new ConformanceImpl()));
        ManagedChannel channel = NettyChannelBuilder.forAddress(at.uri().getHost(), at.uri().getPort())
                .usePlaintext().build();
        try {
            OperationDescriptor op = ConformanceComponent.DESCRIPTOR.operation("echoDoubles");
            EchoDoubles request = new EchoDoubles();
            request.setValues(new double[124]);
            // the request as parts of one double each (a piece of the packed array): 124 parts, 37 s at this rate
            io.switchboard.codec.proto.ProtoCodec.Writer w = ConformanceComponent.DESCRIPTOR
                    .codec(io.switchboard.codec.proto.ProtoCodec.class).writer("echoDoubles", request, 10);
            io.switchboard.codec.proto.ProtoOutput out = new io.switchboard.codec.proto.ProtoOutput(64);
            CompletableFuture<Status> closed = new CompletableFuture<>();
            ClientCall<Part, Part> call = channel.newCall(GrpcTransport.method(op),
                    io.grpc.CallOptions.DEFAULT.withDeadlineAfter(25, TimeUnit.SECONDS));
            call.start(new ClientCall.Listener<>() {
                @Override
                public void onClose(Status status, Metadata trailers) {
                    closed.complete(status);
                }
            }, headers(announced));
            call.request(Integer.MAX_VALUE);
            long start = System.nanoTime();
            while (w.hasMore() && !closed.isDone()) {
                out.reset();
                w.writePart(out, 1);
                call.sendMessage(new Part(out));
                Thread.sleep(300);
                if (System.nanoTime() - start > TimeUnit.SECONDS.toNanos(25)) {
                    break;
                }
            }
            Status status = closed.get(30, TimeUnit.SECONDS);
            assertEquals(announced ? 1 : 0, server.readOnArrivalCalls(), "read on arrival");
            System.out.println("slow sender: the server ended the call after "
                    + (System.nanoTime() - start) / 1_000_000 + " ms with " + status);
            long held = (System.nanoTime() - start) / 1_000_000;
            assertNotEquals(Status.Code.DEADLINE_EXCEEDED, status.getCode(),
                    "the server never ended the trickling call; the client's own deadline did, after " + held + " ms");
            // The limit is the behaviour: ended within a bound of the 2 s idle timeout (the announced
            // case's 2 MiB at 1 MiB/s plus the idle time: 4 s), not when the sender stops (37 s);
            // 4 idle timeouts, 8 s, leave 4 s of margin.
            assertTrue(held < 4 * IDLE.toMillis(), "the server ended the call after " + held + " ms: " + status);
            // Waits for the event, the worker leaving the part queue; a worker left waiting would also
            // leave by itself once an idle timeout passed with no part, so the bound is the behaviour:
            // freed by the call's end, well before an idle timeout (2 s; freeing takes milliseconds).
            long ended = System.nanoTime();
            while (workerWaitsForParts()) {
                assertTrue(System.nanoTime() - ended < IDLE.toNanos(),
                        "a worker thread still waits for the slow sender's parts after the call ended");
                Thread.sleep(10);   // polling the worker threads' state
            }
        } finally {
            channel.shutdownNow();
            server.close();
        }
    }

    private static boolean workerWaitsForParts() {
        return Thread.getAllStackTraces().keySet().stream()
                .anyMatch(t -> t.getName().startsWith("grpc-call-") && t.getState() == Thread.State.TIMED_WAITING
                        && java.util.Arrays.stream(t.getStackTrace()).anyMatch(f -> f.getClassName().endsWith("PartQueue")));
    }

    private static Metadata headers(boolean announced) {
        Metadata headers = new Metadata();
        if (announced) {
            headers.put(GrpcErrors.SIZE, Long.toString(2L << 20));
        }
        return headers;
    }
}
