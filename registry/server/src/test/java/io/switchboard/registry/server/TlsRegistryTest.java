package io.switchboard.registry.server;

import io.switchboard.client.Switchboard;
import io.switchboard.registry.RegistryClient;
import io.switchboard.registry.ComponentEntry;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.switchboard.protocol.ClientSettings;
import io.switchboard.protocol.TlsSettings;
import io.switchboard.protocol.TransportException;
import java.io.IOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** The registry's SOAP endpoint over TLS, with a self-signed key made by keytool for the test. */
class TlsRegistryTest {
    private static final char[] PASSWORD = "test-only-password".toCharArray();

    @TempDir
    static Path dir;
    private static Path keyStore;
    private static Path trustStore;

    @BeforeAll
    static void makeKeys() throws Exception {
        keyStore = dir.resolve("registry.p12");
        trustStore = dir.resolve("trust.p12");
        Path cert = dir.resolve("registry.cer");
        keytool("-genkeypair", "-alias", "registry", "-keyalg", "EC", "-groupname", "secp256r1",
                "-dname", "CN=localhost", "-ext", "SAN=ip:127.0.0.1,dns:localhost", "-validity", "2",
                "-storetype", "PKCS12", "-keystore", keyStore.toString(), "-storepass", new String(PASSWORD),
                "-keypass", new String(PASSWORD));
        keytool("-exportcert", "-alias", "registry", "-keystore", keyStore.toString(), "-storepass",
                new String(PASSWORD), "-file", cert.toString());
        keytool("-importcert", "-noprompt", "-alias", "registry", "-file", cert.toString(), "-storetype", "PKCS12",
                "-keystore", trustStore.toString(), "-storepass", new String(PASSWORD));
    }

    private static void keytool(String... args) throws IOException, InterruptedException {
        List<String> cmd = new ArrayList<>(List.of(Path.of(System.getProperty("java.home"), "bin", "keytool").toString()));
        cmd.addAll(List.of(args));
        Process p = new ProcessBuilder(cmd).redirectErrorStream(true).start();
        String out = new String(p.getInputStream().readAllBytes());
        assertTrue(p.waitFor(60, TimeUnit.SECONDS), "keytool finished");
        assertEquals(0, p.exitValue(), "keytool " + args[0] + ": " + out);
    }

    @Test
    void trustingClientsTalkTlsAndPlainHttpIsRefused() throws Exception {
        try (RegistryServer registry = RegistryServer.builder().secret("s")
                .tls(TlsSettings.keyStore(keyStore, PASSWORD)).start()) {
            assertTrue(registry.endpoint().startsWith("https://127.0.0.1:"), registry.endpoint());
            ClientSettings trusting = ClientSettings.defaults().withTls(TlsSettings.trustStore(trustStore, PASSWORD));
            try (RegistryClient client = RegistryClient.connect(List.of(registry.endpoint()), "s", trusting)) {
                client.bind(RegistryWatchTest.entry("Secure", "s1", 1001, 0));
                assertEquals(List.of("s1"), client.lookup("Secure").stream().map(ComponentEntry::instanceId).toList());
            }
            try (Switchboard sb = Switchboard.builder(registry.endpoint()).settings(trusting).connect()) {
                assertEquals(1, sb.registry().lookup("Secure").size());
            }

            // the same port spoken to in plain HTTP: no answer, the connection is dropped
            String plain = registry.endpoint().replaceFirst("^https:", "http:");
            try (RegistryClient client = RegistryClient.connect(plain)) {
                assertThrows(TransportException.class, () -> client.lookup("Secure"));
            }
            HttpClient http = HttpClient.newHttpClient();
            assertThrows(IOException.class, () -> http.send(HttpRequest.newBuilder(URI.create(plain + "?wsdl")).build(),
                    HttpResponse.BodyHandlers.ofString()));

            // a client that does not trust the registry's certificate does not get through either
            try (RegistryClient client = RegistryClient.connect(registry.endpoint())) {
                TransportException e = assertThrows(TransportException.class, () -> client.lookup("Secure"));
                assertTrue(e.getMessage().toLowerCase().contains("certif") || e.getMessage().contains("PKIX"),
                        e.getMessage());
            }
            assertEquals(1, registry.store().lookup("Secure").size());
        }
    }
}
