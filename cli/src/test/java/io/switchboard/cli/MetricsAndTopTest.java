package io.switchboard.cli;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.switchboard.client.Switchboard;
import io.switchboard.components.echo.EchoComponent;
import io.switchboard.components.echo.EchoStub;
import io.switchboard.metastub.MetaStub;
import io.switchboard.protocol.CallOptions;
import io.switchboard.protocol.ClientSettings;
import io.switchboard.protocol.TlsSettings;
import io.switchboard.testing.ChildJvm;
import io.switchboard.testing.TestCertificates;
import java.io.IOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.function.Predicate;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * {@code --metrics} on {@code registry} and {@code serve}, scraped over HTTP after real calls, and
 * {@code top --once} showing the same calls, each command in its own JVM as a user runs it; then
 * {@code top} over mutual TLS with the flags every command takes.
 */
class MetricsAndTopTest {
    private final List<ChildJvm> children = new ArrayList<>();

    @TempDir
    Path dir;

    @AfterEach
    void stop() throws InterruptedException {
        for (ChildJvm child : children) {
            child.close();
        }
    }

    /** {@code ./switchboard ARGS} in a JVM of its own, as a user runs it. */
    private ChildJvm start(String... args) throws IOException {
        ChildJvm child = ChildJvm.start(dir.resolve("stderr-" + children.size() + ".txt"), Main.class, args);
        children.add(child);
        return child;
    }

    private static String get(HttpClient http, String url) throws Exception {
        HttpResponse<String> r = http.send(HttpRequest.newBuilder(URI.create(url)).timeout(Duration.ofSeconds(10))
                .build(), HttpResponse.BodyHandlers.ofString());
        assertEquals(200, r.statusCode(), url);
        return r.body();
    }

    /** The value of the first Prometheus sample of {@code name} whose line holds every label given. */
    private static double sample(String scrape, String name, String... labels) {
        for (String line : scrape.split("\n")) {
            if (!line.startsWith(name + "{") && !line.startsWith(name + " ")) {
                continue;
            }
            boolean all = true;
            for (String label : labels) {
                all &= line.contains(label);
            }
            if (all) {
                return Double.parseDouble(line.substring(line.lastIndexOf(' ') + 1));
            }
        }
        throw new AssertionError("no sample " + name + " " + List.of(labels) + " in\n" + scrape);
    }

    /**
     * Runs {@code top --once} until its table satisfies {@code done}: the figures arrive with the
     * server's next lease renewal (every third of a 1 s lease), so a few tries at most.
     */
    private static String topUntil(Predicate<String> done, String... args) throws InterruptedException {
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(30);
        String table = "";
        while (System.nanoTime() < deadline) {
            table = CommandOutput.stdout(0, args);
            if (done.test(table)) {
                return table;
            }
            Thread.sleep(200);   // the next renewal is at most a third of a second away
        }
        throw new AssertionError("top never showed the calls:\n" + table);
    }

    private static Pattern row(String operation, String protocol, long calls) {
        return Pattern.compile("(?m)^Echo\\s+\\S+\\s+1s \\(\\d+s ago\\)\\s+" + operation + "\\s+" + protocol + "\\s+" + calls
                + "\\s");
    }

    @Test
    void metricsMoveWithRealCallsAndTopShowsThem() throws Exception {
        ChildJvm registry = start("registry", "--port", "0", "--store", "memory", "--metrics");
        String url = registry.await("registry");
        String registryMetrics = registry.await("metrics");
        assertTrue(registryMetrics.matches("http://127\\.0\\.0\\.1:\\d+/metrics"), registryMetrics);
        ChildJvm server = start("serve", "echo", "--registry", url, "--lease", "1", "--metrics");
        String serverMetrics = server.await("metrics");

        try (Switchboard sb = Switchboard.connect(url)) {
            EchoStub echo = sb.lookup(EchoComponent.DESCRIPTOR, EchoComponent::stub);
            for (int i = 0; i < 6; i++) {
                echo.withOptions(CallOptions.DEFAULT.with(MetaStub.PROTOCOL, "grpc")).echoDoubles(new double[] {i});
            }
            for (int i = 0; i < 4; i++) {
                echo.withOptions(CallOptions.DEFAULT.with(MetaStub.PROTOCOL, "soap")).empty();
            }
        }
        HttpClient http = HttpClient.newHttpClient();
        String component = get(http, serverMetrics);
        assertEquals(6.0, sample(component, "switchboard_server_calls_seconds_count", "component=\"Echo\"",
                "operation=\"echoDoubles\"", "protocol=\"grpc\"", "outcome=\"ok\""), component);
        assertEquals(4.0, sample(component, "switchboard_server_calls_seconds_count", "operation=\"empty\"",
                "protocol=\"soap\"", "outcome=\"ok\""));
        sample(component, "switchboard_server_calls_seconds", "operation=\"empty\"", "quantile=\"0.99\"");
        assertTrue(component.contains("jvm_memory_used_bytes"), "the JVM's meters too");

        String table = topUntil(t -> row("echoDoubles", "grpc", 6).matcher(t).find()
                && row("empty", "soap", 4).matcher(t).find(), "top", "--once", "--registry", url);
        assertTrue(table.startsWith("switchboard top  " + url), table);
        assertTrue(table.contains("COMPONENT  INSTANCE"), table);

        String reg = get(http, registryMetrics);
        assertTrue(sample(reg, "switchboard_server_calls_seconds_count", "component=\"Registry\"",
                "operation=\"renewWithStats\"", "outcome=\"ok\"") >= 1, reg);
        assertEquals(1.0, sample(reg, "switchboard_registry_entries", ""), reg);
        assertTrue(sample(reg, "switchboard_registry_reports_total", "") >= 1, reg);
    }

    @Test
    void topTakesTheTlsFlagsOfEveryCommand() throws Exception {
        TestCertificates certs = TestCertificates.get();
        String[] serverTls = {"--tls-keystore", certs.serverKeyStore().toString(), "--tls-truststore",
            certs.trustStore().toString(), "--tls-password-file", certs.passwordFile().toString()};
        ChildJvm registry = start(concat(new String[] {"registry", "--port", "0", "--store", "memory"}, serverTls));
        String url = registry.await("registry");
        assertTrue(url.startsWith("https://"), url);
        start(concat(new String[] {"serve", "echo", "--registry", url, "--lease", "1"}, serverTls)).await("serving");
        TlsSettings client = TlsSettings.of(certs.clientKeyStore(), certs.trustStore(), TestCertificates.PASSWORD);
        try (Switchboard sb = Switchboard.builder(url).settings(ClientSettings.defaults().withTls(client)).connect()) {
            EchoStub echo = sb.lookup(EchoComponent.DESCRIPTOR, EchoComponent::stub);
            for (int i = 0; i < 3; i++) {
                echo.withOptions(CallOptions.DEFAULT.with(MetaStub.PROTOCOL, "grpc")).empty();
            }
        }
        String[] clientTls = {"--tls-keystore", certs.clientKeyStore().toString(), "--tls-truststore",
            certs.trustStore().toString(), "--tls-password-file", certs.passwordFile().toString()};
        String table = topUntil(t -> row("empty", "grpc", 3).matcher(t).find(),
                concat(new String[] {"top", "--once", "--registry", url}, clientTls));
        assertTrue(!table.contains(new String(TestCertificates.PASSWORD)), table);
        Matcher m = Pattern.compile("(?m)^Echo\\s+(\\S+)").matcher(table);
        assertTrue(m.find(), table);
    }

    private static String[] concat(String[] a, String[] b) {
        String[] all = java.util.Arrays.copyOf(a, a.length + b.length);
        System.arraycopy(b, 0, all, a.length, b.length);
        return all;
    }
}
