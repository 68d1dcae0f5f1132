package io.switchboard.server;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import io.switchboard.idl.runtime.OperationDescriptor;
import io.switchboard.protocol.Endpoint;
import io.switchboard.protocol.Skeleton;
import io.switchboard.protocol.ServerInterceptor;
import io.switchboard.protocol.ServerInterceptorChain;
import io.switchboard.protocol.spi.DeduplicatingInterceptor;
import io.switchboard.protocol.spi.DeduplicatingSkeleton;
import io.switchboard.registry.CallSummary;
import io.switchboard.registry.ComponentEntry;
import io.switchboard.testing.conformance.ConformanceComponent;
import io.switchboard.testing.conformance.ConformanceImpl;
import io.switchboard.testing.conformance.DivideFaultException;
import io.switchboard.testing.conformance.Increment;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.List;
import org.junit.jupiter.api.Test;

/** What the server-side collector counts, at its skeleton seam and behind a real SOAP listener. */
class ServerCallStatsTest {
    private static final OperationDescriptor INCREMENT = ConformanceComponent.DESCRIPTOR.operation("increment");

    @Test
    void countsOutcomesRepeatsAndRefusalsPerOperationAndProtocol() throws Exception {
        ServerCallStats stats = new ServerCallStats(new SimpleMeterRegistry());
        ConformanceImpl impl = new ConformanceImpl();
        Skeleton shared = new DeduplicatingSkeleton(ConformanceComponent.skeleton(impl), 1 << 20, Duration.ofMinutes(1));
        Skeleton grpc = stats.counting(shared, "Conformance", "grpc");
        Skeleton soap = stats.counting(shared, "Conformance", "soap");
        Increment by = new Increment();
        by.setBy(3);

        grpc.invoke(INCREMENT, by, "call-1");
        soap.invoke(INCREMENT, by, "call-1");   // the client's fallback after gRPC failed mid-call
        soap.invoke(INCREMENT, by, "call-2");
        OperationDescriptor divide = ConformanceComponent.DESCRIPTOR.operation("divide");
        io.switchboard.testing.conformance.Divide byZero = new io.switchboard.testing.conformance.Divide();
        byZero.setDividend(1);
        byZero.setDivisor(0);
        assertThrows(DivideFaultException.class, () -> soap.invoke(divide, byZero, null));
        grpc.refused(INCREMENT, "malformed");

        assertEquals(6, impl.total.get(), "the repeat did not run again");
        CallSummary s = stats.summary("Conformance");
        CallSummary.Row g = s.row("increment", "grpc");
        assertEquals(1, g.calls());
        assertEquals(1, g.refusals());
        assertNotNull(g.p50Micros());
        CallSummary.Row o = s.row("increment", "soap");
        assertEquals(2, o.calls());
        assertEquals(1, o.repeats());
        assertEquals(1, o.succeeded());
        CallSummary.Row d = s.row("divide", "soap");
        assertEquals(1, d.faults());
        assertNull(d.p50Micros(), "latencies are of calls that answered without a fault");
        assertTrue(stats.summary("Other").rows().isEmpty());
        assertEquals(2.0, stats.meters().get(ServerCallStats.CALLS).tag("protocol", "soap").tag("operation", "increment")
                .timers().stream().mapToDouble(t -> t.count()).sum());
    }

    @Test
    void withTracingOnRepeatsAndRefusalsAreStillCounted() throws Exception {
        ServerCallStats stats = new ServerCallStats(new SimpleMeterRegistry());
        ConformanceImpl impl = new ConformanceImpl();
        DeduplicatingInterceptor once = new DeduplicatingInterceptor(1 << 20, Duration.ofMinutes(1));
        // as ComponentServer exports it with tracing on: the tracing step outside the counting one
        List<ServerInterceptor> steps = ComponentServer.chain(
                new TracingServerInterceptor(io.opentelemetry.api.OpenTelemetry.noop()), stats, once,
                new DrainingInterceptor(), List.of());
        assertEquals(List.of(TracingServerInterceptor.class, CallStatsInterceptor.class, DeduplicatingInterceptor.class),
                steps.stream().map(Object::getClass).toList().subList(0, 3), "tracing, then counting right around the de-duplicator");
        Skeleton plain = ConformanceComponent.skeleton(impl);
        Skeleton grpc = ServerInterceptorChain.of("Conformance", "grpc", steps, plain);
        Skeleton soap = ServerInterceptorChain.of("Conformance", "soap", steps, plain);
        Increment by = new Increment();
        by.setBy(3);

        grpc.invoke(INCREMENT, by, "call-1");
        soap.invoke(INCREMENT, by, "call-1");   // the fallback after gRPC failed mid-call
        soap.refused(INCREMENT, "malformed");   // the SOAP listener refused a request

        assertEquals(3, impl.total.get(), "the repeat did not run again");
        CallSummary.Row o = stats.summary("Conformance").row("increment", "soap");
        assertEquals(1, o.repeats(), "the repeat is seen through the tracing step");
        assertEquals(1, o.refusals(), "the refusal reaches the counting step");
    }

    @Test
    void aRequestTheSoapListenerRefusesIsCountedForItsOperation() throws Exception {
        try (ComponentServer server = ComponentServer.builder().protocols("soap").build()) {
            ComponentEntry entry = server.export(ConformanceComponent.skeleton(new ConformanceImpl()));
            Endpoint soap = entry.endpoint("soap").orElseThrow();
            String ns = INCREMENT.requestElement().getNamespaceURI();
            String envelope = "<s:Envelope xmlns:s=\"http://schemas.xmlsoap.org/soap/envelope/\"><s:Body>"
                    + "<increment xmlns=\"" + ns + "\"><by>not a number</by></increment></s:Body></s:Envelope>";
            HttpResponse<String> r = HttpClient.newHttpClient().send(HttpRequest.newBuilder(URI.create(soap.address()))
                    .header("Content-Type", "text/xml; charset=utf-8").header("SOAPAction", "\"" + INCREMENT.soapAction() + "\"")
                    .POST(HttpRequest.BodyPublishers.ofString(envelope)).build(), HttpResponse.BodyHandlers.ofString());
            assertEquals(500, r.statusCode(), r.body());   // a SOAP 1.1 fault, the sender's too (WS-I BP R1126)
            assertTrue(r.body().contains("refused"), r.body());
            CallSummary.Row row = server.callStats().summary("Conformance").row("increment", "soap");
            assertNotNull(row, "the refusal has a row");
            assertEquals(1, row.refusals());
            assertEquals(0, row.calls(), "a refused request never reached the operation");
        }
    }
}
