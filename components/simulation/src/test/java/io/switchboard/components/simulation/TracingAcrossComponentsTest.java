package io.switchboard.components.simulation;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.opentelemetry.api.GlobalOpenTelemetry;
import io.opentelemetry.api.common.AttributeKey;
import io.opentelemetry.api.trace.Span;
import io.opentelemetry.api.trace.SpanKind;
import io.opentelemetry.api.trace.StatusCode;
import io.opentelemetry.api.trace.propagation.W3CTraceContextPropagator;
import io.opentelemetry.context.Scope;
import io.opentelemetry.context.propagation.ContextPropagators;
import io.opentelemetry.sdk.OpenTelemetrySdk;
import io.opentelemetry.sdk.testing.exporter.InMemorySpanExporter;
import io.opentelemetry.sdk.trace.SdkTracerProvider;
import io.opentelemetry.sdk.trace.data.SpanData;
import io.opentelemetry.sdk.trace.export.SimpleSpanProcessor;
import io.switchboard.components.simulation.optimizer.FitResult;
import io.switchboard.components.simulation.optimizer.OptimizerComponent;
import io.switchboard.components.simulation.optimizer.OptimizerService;
import io.switchboard.components.simulation.optimizer.OptimizerStub;
import io.switchboard.metastub.FixedPolicy;
import io.switchboard.metastub.MetaStub;
import io.switchboard.metastub.TracingInterceptor;
import io.switchboard.protocol.Endpoint;
import io.switchboard.protocol.spi.UnixSockets;
import io.switchboard.registry.ComponentEntry;
import io.switchboard.registry.server.RegistryServer;
import io.switchboard.server.ComponentServer;
import io.switchboard.testing.UnusedPorts;
import java.util.ArrayList;
import java.util.List;
import java.util.function.Predicate;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * One trace over three components and two protocols, with a fallback: the test (the client)
 * calls the optimizer over gRPC, whose endpoint is dead, so the failsafe repeats the call over
 * SOAP; the optimizer calls the simulator, over gRPC for time courses and over SOAP for the
 * steady state ("size" policy); then, in the same trace, the client calls an echo component over
 * gRPC. Every span, client and server, on every hop, is in the test's trace, and each server span
 * is the child of the client span of the attempt that reached it.
 */
class TracingAcrossComponentsTest {
    private static final AttributeKey<String> PROTOCOL = TracingInterceptor.PROTOCOL;
    private static final InMemorySpanExporter EXPORTER = InMemorySpanExporter.create();
    private static OpenTelemetrySdk sdk;
    private static RegistryServer registry;
    private static ComponentServer simulatorServer;
    private static ComponentServer optimizerServer;
    private static ComponentEntry optimizerEntry;
    private static ComponentEntry echoEntry;

    @BeforeAll
    static void start() {
        sdk = OpenTelemetrySdk.builder()
                .setTracerProvider(SdkTracerProvider.builder().addSpanProcessor(SimpleSpanProcessor.create(EXPORTER)).build())
                .setPropagators(ContextPropagators.create(W3CTraceContextPropagator.getInstance()))
                .build();
        // the optimizer's own switchboard takes the global OpenTelemetry, as a component started by the CLI does
        GlobalOpenTelemetry.resetForTest();
        GlobalOpenTelemetry.set(sdk);
        registry = RegistryServer.builder().secret("t").start();
        simulatorServer = ComponentServer.builder().registry(registry.endpoint(), "t").build();
        simulatorServer.export(SimulatorComponent.skeleton(new SimulatorService()));
        optimizerServer = ComponentServer.builder().registry(registry.endpoint(), "t").build();
        optimizerEntry = optimizerServer.export(OptimizerComponent.skeleton(new OptimizerService(registry.endpoint())));
        echoEntry = simulatorServer.export(io.switchboard.components.echo.EchoComponent.skeleton(
                new io.switchboard.components.echo.EchoService()));
    }

    @AfterAll
    static void stop() {
        optimizerServer.close();
        simulatorServer.close();
        registry.close();
        GlobalOpenTelemetry.resetForTest();
        sdk.close();
    }

    @Test
    void aFitWithAFallbackIsOneTraceOverThreeComponentsAndTwoProtocols() throws Exception {
        List<Endpoint> endpoints = new ArrayList<>();
        for (Endpoint e : optimizerEntry.endpoints()) {
            // a dead port, and no Unix socket that a client on this host would take instead
            endpoints.add(e.protocol().equals("grpc") ? new Endpoint("grpc", UnixSockets.overTcp(e).address()
                    .replaceFirst(":\\d+", ":" + UnusedPorts.port())) : e);
        }
        double[] times = new double[40];
        for (int i = 0; i < times.length; i++) {
            times[i] = 0.25 * (i + 1);
        }
        double[] observed = EnzymeModel.simulate(EnzymeModelTest.TRUE, EnzymeModelTest.INITIAL, times);
        double[] guess = EnzymeModelTest.TRUE.clone();
        guess[0] *= 1.2;

        Span root = sdk.getTracer("test").spanBuilder("client").startSpan();
        String traceId = root.getSpanContext().getTraceId();
        try (MetaStub channel = MetaStub.builder(OptimizerComponent.DESCRIPTOR).endpoints(endpoints)
                .policy(new FixedPolicy("grpc")).serverRecognisesCallIds(true).tracing(sdk).build();
             Scope scope = root.makeCurrent()) {
            OptimizerStub optimizer = OptimizerComponent.stub(channel);
            FitResult fit = optimizer.fit(guess, EnzymeModelTest.INITIAL, times, observed, "Simulator", "size");
            assertNotNull(fit.getParameters());
            try (MetaStub echoChannel = MetaStub.builder(io.switchboard.components.echo.EchoComponent.DESCRIPTOR)
                    .endpoints(echoEntry.endpoints()).policy(new FixedPolicy("grpc")).tracing(sdk).build()) {
                double[] values = {1.5, -0.0, Double.NaN};
                assertArrayEquals(values, io.switchboard.components.echo.EchoComponent.stub(echoChannel).echoDoubles(values));
            }
        } finally {
            root.end();
        }

        // the third component: the echo call, the caller's child, run over gRPC as its server's child
        SpanData echoClient = one(await(s -> s.getKind() == SpanKind.CLIENT && s.getName().equals("Echo/echoDoubles"), 1));
        SpanData echoServer = one(await(s -> s.getKind() == SpanKind.SERVER && s.getName().equals("Echo/echoDoubles"), 1));
        assertEquals(traceId, echoClient.getTraceId());
        assertEquals(root.getSpanContext().getSpanId(), echoClient.getParentSpanId());
        assertEquals(echoClient.getSpanId(), echoServer.getParentSpanId());
        assertEquals("grpc", echoServer.getAttributes().get(PROTOCOL));

        // the client's two attempts at the fit: gRPC refused, then the failsafe's SOAP
        List<SpanData> fitClients = await(s -> s.getKind() == SpanKind.CLIENT && s.getName().equals("Optimizer/fit"), 2);
        SpanData failed = fitClients.stream().filter(s -> "grpc".equals(s.getAttributes().get(PROTOCOL))).findFirst()
                .orElseThrow();
        SpanData fallback = fitClients.stream().filter(s -> "soap".equals(s.getAttributes().get(PROTOCOL))).findFirst()
                .orElseThrow();
        assertEquals(StatusCode.ERROR, failed.getStatus().getStatusCode());
        assertEquals(0L, failed.getAttributes().get(TracingInterceptor.ATTEMPT));
        assertFalse(failed.getAttributes().get(TracingInterceptor.FALLBACK));
        assertEquals(StatusCode.UNSET, fallback.getStatus().getStatusCode());
        assertEquals(1L, fallback.getAttributes().get(TracingInterceptor.ATTEMPT));
        assertTrue(fallback.getAttributes().get(TracingInterceptor.FALLBACK));
        assertTrue(fallback.getAttributes().get(TracingInterceptor.REASON).contains("fallback"),
                fallback.getAttributes().get(TracingInterceptor.REASON));
        assertEquals("Optimizer", fallback.getAttributes().get(TracingInterceptor.RPC_SERVICE));
        assertEquals("fit", fallback.getAttributes().get(TracingInterceptor.RPC_METHOD));
        for (SpanData attempt : fitClients) {
            assertEquals(traceId, attempt.getTraceId());
            assertEquals(root.getSpanContext().getSpanId(), attempt.getParentSpanId(), "an attempt is the caller's child");
        }

        // the optimizer ran once, over SOAP, as the child of the fallback attempt
        SpanData fitServer = one(await(s -> s.getKind() == SpanKind.SERVER && s.getName().equals("Optimizer/fit"), 1));
        assertEquals(traceId, fitServer.getTraceId());
        assertEquals(fallback.getSpanId(), fitServer.getParentSpanId());
        assertEquals("soap", fitServer.getAttributes().get(PROTOCOL));
        assertEquals(fallback.getAttributes().get(TracingInterceptor.CALL_ID),
                fitServer.getAttributes().get(TracingInterceptor.CALL_ID));

        // the optimizer's calls to the simulator: children of its server span, gRPC and SOAP
        List<SpanData> simClients = await(s -> s.getKind() == SpanKind.CLIENT && s.getName().startsWith("Simulator/")
                && s.getTraceId().equals(traceId), 2);
        List<SpanData> simServers = await(s -> s.getKind() == SpanKind.SERVER && s.getName().startsWith("Simulator/")
                && s.getTraceId().equals(traceId), simClients.size());
        assertEquals(simClients.size(), simServers.size(), "each simulator call ran once, in this trace");
        boolean grpc = false;
        boolean soap = false;
        for (SpanData client : simClients) {
            assertEquals(fitServer.getSpanId(), client.getParentSpanId(), client.getName());
            String protocol = client.getAttributes().get(PROTOCOL);
            grpc |= client.getName().equals("Simulator/simulate") && "grpc".equals(protocol);
            soap |= client.getName().equals("Simulator/steadyState") && "soap".equals(protocol);
            SpanData server = one(simServers.stream().filter(s -> s.getParentSpanId().equals(client.getSpanId())).toList());
            assertEquals(client.getName(), server.getName());
            assertEquals(protocol, server.getAttributes().get(PROTOCOL), "the server saw the protocol the client chose");
        }
        assertTrue(grpc, "a time course went over gRPC");
        assertTrue(soap, "the steady state went over SOAP");

        // and nothing of this call in another trace: three components, one trace
        for (SpanData s : EXPORTER.getFinishedSpanItems()) {
            if (s.getName().startsWith("Optimizer/") || s.getName().startsWith("Simulator/") || s.getName().startsWith("Echo/")) {
                assertEquals(traceId, s.getTraceId(), s.toString());
            }
        }
    }

    /** Waits up to 10 s for at least {@code count} finished spans that match (spans end on servers' threads). */
    private static List<SpanData> await(Predicate<SpanData> matching, int count) throws InterruptedException {
        long deadline = System.nanoTime() + 10_000_000_000L;
        List<SpanData> found;
        do {
            found = EXPORTER.getFinishedSpanItems().stream().filter(matching).toList();
            if (found.size() >= count && count > 0) {
                return found;
            }
            Thread.sleep(10);
        } while (System.nanoTime() < deadline);
        throw new AssertionError("expected " + count + " spans, found " + found.size() + ": " + found);
    }

    private static SpanData one(List<SpanData> spans) {
        assertEquals(1, spans.size(), spans.toString());
        return spans.get(0);
    }
}
