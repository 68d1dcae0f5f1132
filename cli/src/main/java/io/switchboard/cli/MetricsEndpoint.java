package io.switchboard.cli;

import io.micrometer.core.instrument.binder.jvm.JvmGcMetrics;
import io.micrometer.core.instrument.binder.jvm.JvmMemoryMetrics;
import io.micrometer.core.instrument.binder.jvm.JvmThreadMetrics;
import io.micrometer.core.instrument.binder.system.ProcessorMetrics;
import io.micrometer.core.instrument.binder.system.UptimeMetrics;
import io.micrometer.prometheusmetrics.PrometheusConfig;
import io.micrometer.prometheusmetrics.PrometheusMeterRegistry;
import io.switchboard.protocol.spi.WebHandler;

/**
 * {@code --metrics}: a Prometheus meter registry that the server's meters go to, with the JVM's,
 * scraped at {@code /metrics} on the server's SOAP port (and TLS), in Prometheus' text format.
 *
 * <pre>{@code
 * MetricsEndpoint metrics = new MetricsEndpoint();
 * ComponentServer server = ComponentServer.builder().meterRegistry(metrics.registry()).build();
 * server.mount(MetricsEndpoint.PATH, metrics);
 * }</pre>
 */
public final class MetricsEndpoint implements WebHandler {
    public static final String PATH = "/metrics";
    static final String CONTENT_TYPE = "text/plain; version=0.0.4; charset=utf-8";

    private final PrometheusMeterRegistry registry = new PrometheusMeterRegistry(PrometheusConfig.DEFAULT);
    private final JvmGcMetrics gc = new JvmGcMetrics();

    public MetricsEndpoint() {
        new JvmMemoryMetrics().bindTo(registry);
        new JvmThreadMetrics().bindTo(registry);
        new ProcessorMetrics().bindTo(registry);
        new UptimeMetrics().bindTo(registry);
        gc.bindTo(registry);
    }

    public PrometheusMeterRegistry registry() {
        return registry;
    }

    @Override
    public Response get(Request request) {
        if (!request.path().isEmpty() && !request.path().equals("/")) {
            return Response.notFound();
        }
        return Response.text(200, CONTENT_TYPE, registry.scrape());
    }

    /** {@code http(s)://HOST:PORT/metrics} beside a SOAP endpoint of the same listener. */
    static String besides(String soapEndpoint) {
        java.net.URI u = java.net.URI.create(soapEndpoint);
        return u.getScheme() + "://" + u.getRawAuthority() + PATH;
    }
}
