package io.switchboard.registry.server;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.switchboard.protocol.ClientSettings;
import io.switchboard.protocol.ServerSettings;
import io.switchboard.protocol.TlsSettings;
import io.switchboard.registry.ComponentEntry;
import io.switchboard.registry.RegistryClient;
import io.switchboard.server.ComponentServer;
import io.switchboard.testing.PythonPeers;
import io.switchboard.testing.ServedWsdl;
import io.switchboard.testing.TestCertificates;
import io.switchboard.testing.conformance.ConformanceComponent;
import io.switchboard.testing.conformance.ConformanceImpl;
import java.io.File;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Every {@code ?wsdl} of a registry and a component server on TLS (the registry's own and the
 * component's, as its entry names it) answers a WSDL whose {@code soap:address} is the
 * {@code https://} address the entry publishes, to Java's HTTP client and to {@code curl} with the
 * client's PEM files, with and without client certificates required; on plain HTTP, the same with
 * {@code http://}.
 */
class TlsWsdlTest {
    private final TestCertificates certs = TestCertificates.get();
    @TempDir
    Path dir;

    @Test
    void serverOnlyTls() throws Exception {
        assertEveryWsdlNamesItsPublishedAddress(certs.server(), certs.clientWithoutKey(), "https://");
    }

    @Test
    void mutualTls() throws Exception {
        assertEveryWsdlNamesItsPublishedAddress(certs.serverMutual(), certs.client(), "https://");
    }

    @Test
    void plainHttp() throws Exception {
        assertEveryWsdlNamesItsPublishedAddress(null, null, "http://");
    }

    private void assertEveryWsdlNamesItsPublishedAddress(TlsSettings server, TlsSettings client, String scheme)
            throws Exception {
        RegistryServer.Builder registryBuilder = RegistryServer.builder().secret("s");
        ServerSettings settings = ServerSettings.defaults();
        if (server != null) {
            registryBuilder.tls(server);
            settings = settings.withTls(server);
        }
        ClientSettings clientSettings = client == null ? ClientSettings.defaults() : ClientSettings.defaults().withTls(client);
        try (RegistryServer registry = registryBuilder.start();
             RegistryClient binder = RegistryClient.connect(List.of(registry.endpoint()), "s", clientSettings);
             ComponentServer components = ComponentServer.builder().protocols("grpc", "soap").settings(settings)
                     .registry(binder).build()) {
            ComponentEntry entry = components.export(ConformanceComponent.skeleton(new ConformanceImpl()));
            String soap = entry.endpoint("soap").orElseThrow().address();
            assertEquals(soap + "?wsdl", entry.wsdlUrl());
            assertEquals(registry.endpoint() + "?wsdl", registry.wsdlUrl());
            HttpClient http = (client == null ? HttpClient.newBuilder() : HttpClient.newBuilder().sslContext(client.context()))
                    .connectTimeout(Duration.ofSeconds(10)).build();
            for (String published : List.of(registry.endpoint(), soap)) {
                assertTrue(published.startsWith(scheme), published);
                HttpResponse<String> r = http.send(HttpRequest.newBuilder(URI.create(published + "?wsdl")).build(),
                        HttpResponse.BodyHandlers.ofString());
                assertEquals(200, r.statusCode(), r.body());
                assertEquals(published, ServedWsdl.soapAddress(r.body()), "Java's HTTP client");
                assertEquals(published, ServedWsdl.soapAddress(curl(published + "?wsdl", client)), "curl");
            }
        }
    }

    /** {@code curl} GETs url, with the test CA and, for a client with a key, its certificate and key. */
    private String curl(String url, TlsSettings client) throws Exception {
        String curl = onPath("curl");
        List<String> command = new ArrayList<>(List.of(curl, "--silent", "--show-error", "--fail",
                "--max-time", "30"));
        if (client != null) {
            TestCertificates.Pem pem = certs.clientPem();
            command.addAll(List.of("--cacert", pem.ca().toString()));
            if (client.hasKey()) {
                command.addAll(List.of("--cert", pem.certificate().toString(), "--key", pem.key().toString()));
            }
        }
        command.add(url);
        PythonPeers.Result r = PythonPeers.run(dir, "curl", Duration.ofMinutes(1), Map.of(), command.toArray(String[]::new));
        assertEquals(0, r.exit(), r.report(String.join(" ", command)));
        return r.out();
    }

    private static String onPath(String program) {
        for (String d : System.getenv().getOrDefault("PATH", "").split(File.pathSeparator)) {
            Path p = Path.of(d, program);
            if (Files.isExecutable(p)) {
                return p.toString();
            }
        }
        throw new AssertionError(program + " is not on PATH: this test checks the WSDL with curl, as a user would"
                + " (on Debian: apt-get install curl)");
    }
}
