package io.switchboard.spring.boot;

import io.opentelemetry.api.OpenTelemetry;
import org.springframework.boot.autoconfigure.AutoConfiguration;
import org.springframework.boot.autoconfigure.condition.ConditionalOnClass;
import org.springframework.boot.autoconfigure.condition.ConditionalOnSingleCandidate;
import org.springframework.context.annotation.Bean;

/**
 * Switchboard's client and server spans through the application's {@link OpenTelemetry} bean: the
 * one Boot makes with Micrometer Tracing's OpenTelemetry bridge
 * ({@code micrometer-tracing-bridge-otel}), or the application's own. A call's client span and the
 * server span of its component are then in one trace with the application's other spans, and go to
 * its exporters. Without such a bean the server and the client trace with the global OpenTelemetry
 * when one is registered, as outside Spring. Ordered before the client and the server so the
 * customizers exist when they are built.
 *
 * <pre>{@code
 * management.tracing.sampling.probability=1.0   # with micrometer-tracing-bridge-otel on the class path
 * }</pre>
 */
@AutoConfiguration(before = {SwitchboardClientAutoConfiguration.class, SwitchboardServerAutoConfiguration.class},
        afterName = {"org.springframework.boot.actuate.autoconfigure.opentelemetry.OpenTelemetryAutoConfiguration",
                "org.springframework.boot.actuate.autoconfigure.tracing.OpenTelemetryTracingAutoConfiguration"})
@ConditionalOnClass(OpenTelemetry.class)
@ConditionalOnSingleCandidate(OpenTelemetry.class)
public class SwitchboardTracingAutoConfiguration {

    @Bean
    SwitchboardServerCustomizer switchboardServerTracing(OpenTelemetry openTelemetry) {
        return builder -> builder.tracing(openTelemetry);
    }

    @Bean
    SwitchboardClientCustomizer switchboardClientTracing(OpenTelemetry openTelemetry) {
        return builder -> builder.tracing(openTelemetry);
    }
}
