package io.switchboard.spring.boot;

import static org.assertj.core.api.Assertions.assertThat;

import io.micrometer.tracing.Span;
import io.micrometer.tracing.Tracer;
import io.opentelemetry.api.trace.SpanKind;
import io.opentelemetry.sdk.testing.exporter.InMemorySpanExporter;
import io.opentelemetry.sdk.trace.SdkTracerProvider;
import io.opentelemetry.sdk.trace.data.SpanData;
import io.switchboard.components.echo.EchoService;
import io.switchboard.components.echo.EchoStub;
import io.switchboard.metastub.MetaStub;
import io.switchboard.metastub.TracingInterceptor;
import io.switchboard.protocol.CallOptions;
import io.switchboard.registry.testing.RunningRegistry;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;
import org.springframework.boot.SpringBootConfiguration;
import org.springframework.boot.WebApplicationType;
import org.springframework.boot.autoconfigure.EnableAutoConfiguration;
import org.springframework.boot.builder.SpringApplicationBuilder;
import org.springframework.context.ConfigurableApplicationContext;
import org.springframework.context.annotation.Bean;

/**
 * A Boot application with Micrometer Tracing's OpenTelemetry bridge: Boot makes the OpenTelemetry,
 * the application adds an exporter, and one call of the injected stub to the component the
 * application serves is a client span and a server span of one trace, the server's the child; a
 * call made inside a span of the application's own is in that span's trace.
 */
class SwitchboardTracingTest {
    private static RunningRegistry registry;
    private static ConfigurableApplicationContext context;

    @BeforeAll
    static void start() throws Exception {
        registry = RunningRegistry.start();
        Path secret = Files.createTempFile("switchboard", ".secret");
        secret.toFile().deleteOnExit();
        Files.writeString(secret, RunningRegistry.SECRET);
        context = new SpringApplicationBuilder(TracedApplication.class).web(WebApplicationType.NONE)
                .properties("switchboard.registry.url=" + registry.url(), "switchboard.registry.secret-file=" + secret,
                        "switchboard.server.protocols=soap,grpc,tcp", "switchboard.server.drain.quiet-period=0s",
                        "management.tracing.sampling.probability=1.0", "spring.jmx.enabled=false")
                .run();
    }

    @AfterAll
    static void stop() {
        if (context != null) {
            context.close();
        }
        registry.close();
    }

    @BeforeEach
    void forgetEarlierSpans() {
        flush();
        context.getBean(InMemorySpanExporter.class).reset();
    }

    @ParameterizedTest
    @ValueSource(strings = {"soap", "grpc", "tcp"})
    void aCallIsAClientSpanAndItsServerSpanInOneTrace(String protocol) {
        EchoStub echo = context.getBean(EchoStub.class);
        assertThat(echo.withOptions(CallOptions.DEFAULT.with(MetaStub.PROTOCOL, protocol)).echoDoubles(new double[] {7}))
                .containsExactly(7);
        flush();

        List<SpanData> spans = context.getBean(InMemorySpanExporter.class).getFinishedSpanItems().stream()
                .filter(s -> s.getName().equals("Echo/echoDoubles")).toList();
        SpanData client = only(spans, SpanKind.CLIENT);
        SpanData server = only(spans, SpanKind.SERVER);
        assertThat(client.getAttributes().get(TracingInterceptor.PROTOCOL)).isEqualTo(protocol);
        assertThat(server.getAttributes().get(TracingInterceptor.PROTOCOL)).isEqualTo(protocol);
        assertThat(server.getTraceId()).isEqualTo(client.getTraceId());
        assertThat(server.getParentSpanId()).as("the server's span is the client's child").isEqualTo(client.getSpanId());
        assertThat(server.getAttributes().get(TracingInterceptor.CALL_ID))
                .isEqualTo(client.getAttributes().get(TracingInterceptor.CALL_ID)).isNotNull();
    }

    @Test
    void aCallMadeInsideTheApplicationsSpanJoinsItsTrace() {
        Tracer tracer = context.getBean(Tracer.class);   // Micrometer Tracing's, bridged to OpenTelemetry
        Span request = tracer.nextSpan().name("orders-request").start();
        try (Tracer.SpanInScope scope = tracer.withSpan(request)) {
            context.getBean(EchoStub.class).echoDoubles(new double[] {1});
        } finally {
            request.end();
        }
        flush();

        List<SpanData> spans = context.getBean(InMemorySpanExporter.class).getFinishedSpanItems();
        SpanData client = only(spans.stream().filter(s -> s.getName().equals("Echo/echoDoubles")).toList(),
                SpanKind.CLIENT);
        assertThat(client.getTraceId()).isEqualTo(request.context().traceId());
        assertThat(client.getParentSpanId()).as("the client span is the application span's child")
                .isEqualTo(request.context().spanId());
    }

    private static SpanData only(List<SpanData> spans, SpanKind kind) {
        List<SpanData> ofKind = spans.stream().filter(s -> s.getKind() == kind).toList();
        assertThat(ofKind).as(kind + " spans of the call in " + spans).hasSize(1);
        return ofKind.get(0);
    }

    /** Boot exports in batches: make the finished spans reach the exporter now. */
    private static void flush() {
        assertThat(context.getBean(SdkTracerProvider.class).forceFlush().join(30, TimeUnit.SECONDS).isSuccess()).isTrue();
    }

    @SpringBootConfiguration
    @EnableAutoConfiguration
    @ImportSwitchboardStubs(EchoStub.class)
    static class TracedApplication {
        @Bean
        @SwitchboardComponent
        EchoService echoService() {
            return new EchoService();
        }

        @Bean
        InMemorySpanExporter spans() {
            return InMemorySpanExporter.create();
        }
    }
}
