package io.switchboard.cli;

import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.Map;
import org.junit.jupiter.api.Test;

class TracingSetupTest {
    @Test
    void tracingIsOnOnlyWhenTheEnvironmentAsksForAnExport() {
        assertFalse(TracingSetup.wanted(Map.of()));
        assertFalse(TracingSetup.wanted(Map.of("OTEL_SERVICE_NAME", "x")), "a name alone exports nothing");
        assertTrue(TracingSetup.wanted(Map.of("OTEL_EXPORTER_OTLP_ENDPOINT", "http://collector:4318")));
        assertTrue(TracingSetup.wanted(Map.of("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT", "http://collector:4318/v1/traces")));
        assertTrue(TracingSetup.wanted(Map.of("OTEL_TRACES_EXPORTER", "otlp")));
        assertFalse(TracingSetup.wanted(Map.of("OTEL_TRACES_EXPORTER", "none",
                "OTEL_EXPORTER_OTLP_ENDPOINT", "http://collector:4318")));
        assertFalse(TracingSetup.wanted(Map.of("OTEL_SDK_DISABLED", "true",
                "OTEL_EXPORTER_OTLP_ENDPOINT", "http://collector:4318")));
    }
}
