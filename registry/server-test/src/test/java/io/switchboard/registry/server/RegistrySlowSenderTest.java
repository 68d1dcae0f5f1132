package io.switchboard.registry.server;

import io.switchboard.registry.ComponentEntry;
import io.switchboard.registry.RegistryClient;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.switchboard.protocol.Endpoint;
import io.switchboard.protocol.ServerSettings;
import io.switchboard.testing.conformance.ConformanceComponent;
import java.io.ByteArrayOutputStream;
import java.io.OutputStream;
import java.net.Socket;
import java.net.SocketTimeoutException;
import java.net.URI;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;

/**
 * The registry runs on the SOAP server and gets its protection: a slow sender is cut at the request
 * deadline and a flood of idle connections beyond the connection limit does not stop lookups.
 */
class RegistrySlowSenderTest {
    private static final String SECRET = "s3cret";

    @Test
    void slowSenderIsCutAndAFloodDoesNotStopLookups() throws Exception {
        ServerSettings settings = ServerSettings.defaults().withMaxMessageBytes(4L << 20)
                .withIdleTimeout(Duration.ofSeconds(30)).withRequestTimeout(Duration.ofSeconds(1)).withMaxConnections(20);
        List<Socket> flood = new ArrayList<>();
        try (RegistryServer server = RegistryServer.builder().settings(settings).secret(SECRET).start();
             RegistryClient writer = RegistryClient.connect(server.endpoint(), SECRET)) {
            URI uri = URI.create(server.endpoint());
            writer.bind(new ComponentEntry("Flooded", "f1", List.of(new Endpoint("soap",
                    "http://127.0.0.1:9/axis2/services/Flooded")), ConformanceComponent.DESCRIPTOR.schema(), null, null));
            for (int i = 0; i < 100; i++) {
                flood.add(new Socket(uri.getHost(), uri.getPort()));
            }
            Socket slow = new Socket(uri.getHost(), uri.getPort());
            flood.add(slow);
            slow.setSoTimeout(15_000);
            Thread dripper = new Thread(() -> {
                try {
                    OutputStream out = slow.getOutputStream();
                    for (byte b : "POST /axis2/services/Registry HTTP/1.1\r\nHost: x\r\n".getBytes(StandardCharsets.US_ASCII)) {
                        out.write(b); // a byte every 200 ms: inside the 30 s idle timeout
                        Thread.sleep(200);
                    }
                } catch (java.io.IOException | InterruptedException e) {
                    // the server hung up
                }
            });
            dripper.setDaemon(true);
            dripper.start();

            try (RegistryClient reader = RegistryClient.connect(server.endpoint())) {
                assertEquals("f1", reader.lookup("Flooded").get(0).instanceId());
            }

            ByteArrayOutputStream got = new ByteArrayOutputStream();
            try {
                got.write(slow.getInputStream().readAllBytes());
            } catch (SocketTimeoutException e) {
                throw new AssertionError("the registry still holds the slow connection", e);
            }
            assertTrue(got.toString(StandardCharsets.US_ASCII).startsWith("HTTP/1.1 408"), got.toString());
            dripper.interrupt();
        } finally {
            for (Socket s : flood) {
                s.close();
            }
        }
    }
}
