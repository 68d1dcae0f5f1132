package io.switchboard.cli;

import io.opentelemetry.api.GlobalOpenTelemetry;
import io.opentelemetry.api.OpenTelemetry;
import io.opentelemetry.sdk.autoconfigure.AutoConfiguredOpenTelemetrySdk;
import java.util.Map;

/**
 * Turns OpenTelemetry tracing on for a command, from the standard {@code OTEL_*} environment
 * variables, and only when they ask for it: {@code OTEL_TRACES_EXPORTER} (other than
 * {@code none}), {@code OTEL_EXPORTER_OTLP_ENDPOINT} or {@code OTEL_EXPORTER_OTLP_TRACES_ENDPOINT}
 * is set, and {@code OTEL_SDK_DISABLED} is not {@code true}. Then the SDK's autoconfiguration
 * reads the rest ({@code OTEL_SERVICE_NAME}, {@code OTEL_TRACES_SAMPLER}, the OTLP protocol and
 * headers...), is registered as the global OpenTelemetry before any stub or server is built (so
 * meta-stubs and component servers trace by themselves), and flushes its spans when the JVM exits.
 * Defaults that differ from the SDK's: the service name {@code switchboard-<command>}, OTLP over
 * HTTP ({@code http/protobuf}, port 4318, as the OpenTelemetry specification says; the Java SDK's
 * own default is gRPC), and no metrics or logs export (the server's metrics are Prometheus'
 * /metrics).
 *
 * <pre>{@code
 * OTEL_EXPORTER_OTLP_ENDPOINT=http://collector:4318 ./switchboard serve simulator --registry ...
 * }</pre>
 */
final class TracingSetup {
    private static boolean installed;

    private TracingSetup() {
    }

    /** Whether these environment variables ask for traces to be exported. */
    static boolean wanted(Map<String, String> env) {
        if ("true".equalsIgnoreCase(env.getOrDefault("OTEL_SDK_DISABLED", "").trim())) {
            return false;
        }
        String exporter = env.getOrDefault("OTEL_TRACES_EXPORTER", "").trim();
        if (!exporter.isEmpty()) {
            return !exporter.equalsIgnoreCase("none");
        }
        return !env.getOrDefault("OTEL_EXPORTER_OTLP_ENDPOINT", "").isBlank()
                || !env.getOrDefault("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT", "").isBlank();
    }

    /** Installs the SDK once per JVM when the environment asks for it; otherwise does nothing. */
    static synchronized void installFromEnvironment(String command) {
        if (installed) {
            return;
        }
        installed = true;
        if (!wanted(System.getenv())) {
            // the no-op, said once: left unset, the first GlobalOpenTelemetry.get() (a meta-stub asking
            // whether to trace) finds the autoconfiguration on the class path and logs a line about it
            // into every command's output
            try {
                GlobalOpenTelemetry.set(OpenTelemetry.noop());
            } catch (IllegalStateException alreadySet) {
                // someone registered one first: theirs stays
            }
            return;
        }
        String service = "switchboard-" + (command == null || command.startsWith("-") ? "cli" : command);
        AutoConfiguredOpenTelemetrySdk.builder()
                .addPropertiesSupplier(() -> Map.of(
                        "otel.service.name", service,
                        "otel.exporter.otlp.protocol", "http/protobuf",
                        "otel.metrics.exporter", "none",
                        "otel.logs.exporter", "none"))
                .setResultAsGlobal()
                .build();
    }
}
