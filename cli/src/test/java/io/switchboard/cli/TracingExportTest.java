package io.switchboard.cli;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.sun.net.httpserver.HttpServer;
import io.switchboard.client.Switchboard;
import io.switchboard.components.echo.Echo;
import io.switchboard.components.echo.EchoComponent;
import io.switchboard.testing.ChildJvm;
import java.io.IOException;
import java.net.InetSocketAddress;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * {@code serve} with {@code OTEL_EXPORTER_OTLP_ENDPOINT} set exports its server spans over OTLP:
 * a stand-in collector (an HTTP server taking {@code /v1/traces}) receives the span of the call
 * made to it, under the service name {@code switchboard-serve}.
 */
class TracingExportTest {
    @TempDir
    Path dir;

    @Test
    void serveExportsItsSpansToTheCollectorTheEnvironmentNames() throws Exception {
        CountDownLatch received = new CountDownLatch(1);
        HttpServer collector = HttpServer.create(new InetSocketAddress("127.0.0.1", 0), 0);
        collector.createContext("/v1/traces", exchange -> {
            String body = new String(exchange.getRequestBody().readAllBytes(), StandardCharsets.ISO_8859_1);
            exchange.sendResponseHeaders(200, -1);
            exchange.close();
            if (body.contains("Echo/echoDoubles") && body.contains("switchboard-serve")) {
                received.countDown();
            }
        });
        collector.start();
        Path secret = Files.writeString(dir.resolve("secret"), "s3cret-for-test\n");
        Process registry = null;
        Process server = null;
        try {
            registry = start(List.of(), "registry", "--port", "0", "--secret-file", secret.toString(), "--store",
                    "file:" + dir.resolve("registry.json"));
            String url = CommandLineProcessTest.await(registry, "registry");
            server = start(List.of("OTEL_EXPORTER_OTLP_ENDPOINT=http://127.0.0.1:" + collector.getAddress().getPort(),
                    "OTEL_BSP_SCHEDULE_DELAY=100"), "serve", "echo", "--registry", url, "--secret-file", secret.toString());
            CommandLineProcessTest.await(server, "serving");
            try (Switchboard sb = Switchboard.connect(url)) {
                Echo echo = sb.lookup(EchoComponent.DESCRIPTOR, EchoComponent::stub);
                assertEquals(2.5, echo.echoDoubles(new double[] {2.5})[0]);
            }
            assertTrue(received.await(30, TimeUnit.SECONDS), "the collector got no span of the call; the server said: "
                    + Files.readString(dir.resolve("stderr-serve.txt")));
        } finally {
            for (Process p : new Process[] {server, registry}) {
                if (p != null) {
                    p.destroyForcibly().waitFor(30, TimeUnit.SECONDS);
                }
            }
            collector.stop(0);
        }
    }

    private Process start(List<String> env, String... args) throws IOException {
        List<String> cmd = ChildJvm.javaCommand(List.of("-Xmx256m"), Main.class, args);
        ProcessBuilder pb = new ProcessBuilder(cmd).redirectError(dir.resolve("stderr-" + args[0] + ".txt").toFile());
        pb.environment().keySet().removeIf(k -> k.startsWith("OTEL_"));
        for (String e : env) {
            int eq = e.indexOf('=');
            pb.environment().put(e.substring(0, eq), e.substring(eq + 1));
        }
        return pb.start();
    }
}
