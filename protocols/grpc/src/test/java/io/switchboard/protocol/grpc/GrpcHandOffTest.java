package io.switchboard.protocol.grpc;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.switchboard.protocol.ClientSettings;
import io.switchboard.protocol.Endpoint;
import io.switchboard.protocol.ServerSettings;
import io.switchboard.protocol.spi.ProtocolClient;
import io.switchboard.protocol.spi.Transport;
import io.switchboard.testing.conformance.ConformanceComponent;
import io.switchboard.testing.conformance.ConformanceImpl;
import io.switchboard.testing.conformance.ConformanceStub;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import jdk.jfr.Recording;
import jdk.jfr.consumer.RecordedEvent;
import jdk.jfr.consumer.RecordingFile;
import org.junit.jupiter.api.Test;

/**
 * The thread hand-offs of a small gRPC call, as JFR sees them: the server's worker
 * is woken once the one-part request is in and never waits in the part queue, the caller waits
 * for its response by running the call's callbacks itself (parked in {@link CallerExecutor}, not
 * in a monitor the event loop notifies), and a request of many parts is merged as it arrives.
 */
class GrpcHandOffTest {
    @Test
    void aSmallCallWakesTheServerWorkerOnceAndTheCallerRunsItsOwnCallbacks() throws Exception {
        GrpcServer server = (GrpcServer) new GrpcProtocolProvider().newServer(ServerSettings.defaults());
        Path file = Files.createTempFile("handoff", ".jfr");
        try (server; ProtocolClient client = new GrpcProtocolProvider().newClient(ClientSettings.defaults())) {
            Endpoint at = server.export(ConformanceComponent.skeleton(new ConformanceImpl()));
            try (Transport t = client.connect(ConformanceComponent.DESCRIPTOR, at)) {
                ConformanceStub stub = ConformanceComponent.stub(t);
                double[] small = {1.5, -0.0, Double.NaN};
                stub.ping();   // the connection and the classes, before the recording
                List<RecordedEvent> events;
                try (Recording r = new Recording()) {
                    r.enable("jdk.JavaMonitorWait").withThreshold(Duration.ZERO);
                    r.enable("jdk.ThreadPark").withThreshold(Duration.ZERO);
                    r.start();
                    for (int i = 0; i < 200; i++) {
                        stub.ping();                                        // a unary method
                        assertArrayEquals(small, stub.echoDoubles(small));  // a streamed method, one part each way
                    }
                    r.stop();
                    r.dump(file);
                }
                events = RecordingFile.readAllEvents(file);
                String caller = Thread.currentThread().getName();
                long workerWaits = events.stream().filter(e -> e.getEventType().getName().equals("jdk.JavaMonitorWait")
                        && e.getThread() != null && e.getThread().getJavaName().startsWith("grpc-call-")
                        && e.getClass("monitorClass").getName().endsWith("PartQueue")).count();
                // a call whose request stalled for a second gets its worker early from the sweep and may wait: none here
                assertTrue(workerWaits <= server.gate().lateStarts(), workerWaits
                        + " waits of server workers for request parts in 400 one-part calls; the worker was woken before the request was in");
                long callerMonitorWaits = events.stream().filter(e -> e.getEventType().getName().equals("jdk.JavaMonitorWait")
                        && e.getThread() != null && e.getThread().getJavaName().equals(caller)).count();
                assertEquals(0, callerMonitorWaits, "the caller waited on a monitor for the event loop to notify it");
                long callerParks = events.stream().filter(e -> e.getEventType().getName().equals("jdk.ThreadPark")
                        && e.getThread() != null && e.getThread().getJavaName().equals(caller)
                        && e.getClass("parkedClass") != null
                        && e.getClass("parkedClass").getName().endsWith("CallerExecutor")).count();
                assertTrue(callerParks > 0, "the caller waits for its callbacks in CallerExecutor, where it runs them");
            }
        } finally {
            Files.deleteIfExists(file);
        }
    }

    @Test
    void aOnePartRequestOfAStreamedMethodGoesToTheSameStreamingMethod() throws Exception {
        io.switchboard.idl.runtime.OperationDescriptor op = ConformanceComponent.DESCRIPTOR.operation("echoDoubles");
        io.grpc.MethodDescriptor<Part, Part> published = GrpcTransport.method(op);
        io.grpc.MethodDescriptor<Part, Part> sent = GrpcTransport.onePartRequest(op);
        assertEquals(io.grpc.MethodDescriptor.MethodType.BIDI_STREAMING, published.getType(),
                "the server and the .proto keep the streaming method");
        assertEquals(published.getFullMethodName(), sent.getFullMethodName());
        assertTrue(sent.getType().clientSendsOneMessage() && !sent.getType().serverSendsOneMessage(),
                "the client sends its one part with the half-close and still reads a stream of parts");
    }

    @Test
    void aRequestOfManyPartsIsMergedWhileItArrives() throws Exception {
        GrpcServer server = (GrpcServer) new GrpcProtocolProvider().newServer(ServerSettings.defaults());
        try (server; ProtocolClient client = new GrpcProtocolProvider().newClient(ClientSettings.defaults())) {
            Endpoint at = server.export(ConformanceComponent.skeleton(new ConformanceImpl()));
            // no sweep of stalled calls: on a starved machine the 24 parts may take longer than the
            // sweep's second to arrive, and it would start the worker itself; without it the call
            // completes only if the arrival of its request starts the worker
            server.gate().close();
            try (Transport t = client.connect(ConformanceComponent.DESCRIPTOR, at)) {
                // 24 MiB: 24 parts, more than the parts requested ahead plus the flow-control window,
                // so the request completes only if its parts are merged before the half-close (on
                // the server's event loop as they arrive)
                double[] values = new double[3 << 20];
                for (int i = 0; i < values.length; i++) {
                    values[i] = i * 0.5 - 7;
                }
                assertArrayEquals(values, org.junit.jupiter.api.Assertions.assertTimeoutPreemptively(
                        java.time.Duration.ofSeconds(120), () -> ConformanceComponent.stub(t).echoDoubles(values),
                        "the worker never started: the request's arrival did not start it"));
                assertEquals(1, server.readOnArrivalCalls(), "the request was not merged on arrival");
                assertEquals(0, server.gate().lateStarts(),
                        "the worker started when the request was in, not from the sweep of stalled calls");
            }
        }
    }
}
