package io.switchboard.registry.server;

import io.switchboard.registry.RegistryException;
import io.switchboard.registry.RegistryClient;
import io.switchboard.registry.ComponentEntry;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.switchboard.protocol.Endpoint;
import io.switchboard.testing.conformance.ConformanceComponent;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Instant;
import java.util.List;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/** The registry over real SOAP: writes need the secret, entries are checked, lookups are open. */
class RegistryServerTest {
    private static final String SECRET = "correct horse battery staple";
    private static RegistryServer server;
    private static RegistryClient writer;
    private static RegistryClient reader;

    @BeforeAll
    static void start() {
        server = RegistryServer.builder().secret(SECRET).start();
        writer = RegistryClient.connect(server.endpoint(), SECRET);
        reader = RegistryClient.connect(server.endpoint());
    }

    @AfterAll
    static void stop() {
        writer.close();
        reader.close();
        server.close();
    }

    private static ComponentEntry entry(String name, String instance) {
        return new ComponentEntry(name, instance, List.of(new Endpoint("grpc", "grpc://127.0.0.1:9999/" + name),
                new Endpoint("soap", "http://127.0.0.1:9998/axis2/services/" + name)),
                ConformanceComponent.DESCRIPTOR.schema(), null, null);
    }

    @Test
    void bindLookupUnbind() {
        writer.bind(entry("Alpha", "a1"));
        List<ComponentEntry> found = reader.lookup("Alpha");
        assertEquals(1, found.size());
        ComponentEntry e = found.get(0);
        assertEquals("a1", e.instanceId());
        assertEquals(List.of("grpc", "soap"), e.endpoints().stream().map(Endpoint::protocol).toList(),
                "the server's order of preference is kept");
        assertEquals(ConformanceComponent.DESCRIPTOR.schema(), e.interfaceSchema());
        assertTrue(e.boundAt() != null && !e.boundAt().isAfter(Instant.now()));
        assertEquals(1, writer.unbind("Alpha", "a1"));
        assertTrue(reader.lookup("Alpha").isEmpty());
    }

    @Test
    void replicasUnderOneNameAreAllReturned() {
        writer.bind(entry("Replicated", "r1"));
        writer.bind(entry("Replicated", "r2"));
        assertEquals(List.of("r1", "r2"), reader.lookup("Replicated").stream().map(ComponentEntry::instanceId).toList());
        RegistryException dup = assertThrows(RegistryException.class, () -> writer.bind(entry("Replicated", "r1")));
        assertEquals("already-bound", dup.code());
        assertEquals(2, writer.unbind("Replicated", null));
    }

    @Test
    void listingLeavesSchemasOut() {
        writer.rebind(entry("Listed", "l1"));
        ComponentEntry listed = reader.list().stream().filter(e -> e.name().equals("Listed")).findFirst().orElseThrow();
        assertNull(listed.interfaceSchema());
        writer.unbind("Listed", null);
    }

    @Test
    void writesWithoutTheSecretAreRefusedAndChangeNothing() {
        RegistryException noCredential = assertThrows(RegistryException.class, () -> reader.bind(entry("Intruder", "i")));
        assertEquals("unauthorized", noCredential.code());
        try (RegistryClient wrong = RegistryClient.connect(server.endpoint(), "guess")) {
            assertEquals("unauthorized", assertThrows(RegistryException.class,
                    () -> wrong.bind(entry("Intruder", "i"))).code());
            writer.bind(entry("Kept", "k"));
            assertEquals("unauthorized", assertThrows(RegistryException.class, () -> wrong.unbind("Kept", null)).code());
            assertEquals("unauthorized", assertThrows(RegistryException.class,
                    () -> wrong.rebind(entry("Kept", "k2"))).code());
        }
        assertTrue(reader.lookup("Intruder").isEmpty());
        assertEquals(List.of("k"), reader.lookup("Kept").stream().map(ComponentEntry::instanceId).toList());
        writer.unbind("Kept", null);
    }

    @Test
    void oversizeSchemasAreRefusedAndChangeNothing() {
        String schema = ConformanceComponent.DESCRIPTOR.schema();
        // past the schema reader's 1 MiB limit, but inside the registry's 4 MiB message limit
        String overReaderLimit = schema.replace("</xs:schema>", "<!--" + "x".repeat(1 << 20) + "--></xs:schema>");
        ComponentEntry big = new ComponentEntry("BigSchema", "b",
                List.of(new Endpoint("soap", "http://127.0.0.1:1/axis2/services/B")), overReaderLimit, null, null);
        RegistryException e = assertThrows(RegistryException.class, () -> writer.bind(big));
        assertEquals("invalid", e.code());
        assertTrue(e.getMessage().contains("larger than the limit"), e.getMessage());
        // past the registry's message limit: refused by the SOAP layer before it is read
        String overMessageLimit = schema.replace("</xs:schema>", "<!--" + "x".repeat(5 << 20) + "--></xs:schema>");
        ComponentEntry huge = new ComponentEntry("BigSchema", "b",
                List.of(new Endpoint("soap", "http://127.0.0.1:1/axis2/services/B")), overMessageLimit, null, null);
        io.switchboard.protocol.RefusedException r = assertThrows(io.switchboard.protocol.RefusedException.class,
                () -> writer.bind(huge));
        assertEquals("size-limit", r.reason());
        assertTrue(reader.lookup("BigSchema").isEmpty(), "nothing was bound");
        writer.bind(entry("StillWorks", "s"));
        assertEquals(1, reader.lookup("StillWorks").size());
        writer.unbind("StillWorks", null);
    }

    @Test
    void badEntriesAreRefusedWithAReason() {
        ComponentEntry noSoap = new ComponentEntry("NoSoap", "n", List.of(new Endpoint("grpc", "grpc://127.0.0.1:1/x")),
                null, null, null);
        assertTrue(assertThrows(RegistryException.class, () -> writer.bind(noSoap)).getMessage().contains("soap"));
        ComponentEntry badSchema = new ComponentEntry("BadSchema", "b",
                List.of(new Endpoint("soap", "http://127.0.0.1:1/axis2/services/B")),
                "<!DOCTYPE x [<!ENTITY e SYSTEM \"http://example.invalid/\">]><x>&e;</x>", null, null);
        RegistryException e = assertThrows(RegistryException.class, () -> writer.bind(badSchema));
        assertEquals("invalid", e.code());
        assertTrue(e.getMessage().contains("interface schema"), e.getMessage());
        ComponentEntry badName = new ComponentEntry("bad name!", "b",
                List.of(new Endpoint("soap", "http://127.0.0.1:1/axis2/services/B")), null, null, null);
        assertEquals("invalid", assertThrows(RegistryException.class, () -> writer.bind(badName)).code());
        assertTrue(reader.lookup("BadSchema").isEmpty());
    }

    @Test
    void registryPublishesItsOwnWsdl() throws Exception {
        HttpResponse<String> r = HttpClient.newHttpClient().send(HttpRequest.newBuilder(URI.create(server.wsdlUrl()))
                .build(), HttpResponse.BodyHandlers.ofString());
        assertEquals(200, r.statusCode());
        assertTrue(r.body().contains("RegistryPortType") && r.body().contains("lookup"), r.body());
    }
    @Test
    void schemasPointingAtExternalUrlsAreRefusedAndNothingIsFetched() throws Exception {
        java.util.concurrent.atomic.AtomicInteger fetched = new java.util.concurrent.atomic.AtomicInteger();
        com.sun.net.httpserver.HttpServer bait = com.sun.net.httpserver.HttpServer.create(
                new java.net.InetSocketAddress(java.net.InetAddress.getLoopbackAddress(), 0), 0);
        bait.createContext("/", exchange -> {
            fetched.incrementAndGet();
            exchange.sendResponseHeaders(404, -1);
            exchange.close();
        });
        bait.start();
        try {
            String url = "http://127.0.0.1:" + bait.getAddress().getPort() + "/x.xsd";
            String schema = ConformanceComponent.DESCRIPTOR.schema();
            int open = schema.indexOf('>', schema.indexOf("<xs:schema")) + 1;
            List<String> hostile = List.of(
                    schema.substring(0, open) + "<xs:import namespace='urn:x' schemaLocation='" + url + "'/>"
                            + schema.substring(open),
                    schema.substring(0, open) + "<xs:include schemaLocation='" + url + "'/>" + schema.substring(open),
                    "<!DOCTYPE xs:schema SYSTEM '" + url + "'>" + schema.substring(schema.indexOf("<xs:schema")));
            for (String s : hostile) {
                ComponentEntry e = new ComponentEntry("External", "x",
                        List.of(new Endpoint("soap", "http://127.0.0.1:1/axis2/services/External")), s, null, null);
                RegistryException refused = assertThrows(RegistryException.class, () -> writer.bind(e));
                assertEquals("invalid", refused.code(), refused.getMessage());
            }
            assertEquals(0, fetched.get(), "the registry fetched nothing");
            assertTrue(reader.lookup("External").isEmpty());
        } finally {
            bait.stop(0);
        }
    }
}
