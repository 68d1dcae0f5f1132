package io.switchboard.registry.server;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.google.gson.JsonElement;
import com.google.gson.JsonObject;
import com.google.gson.JsonParser;
import io.switchboard.client.Switchboard;
import io.switchboard.metastub.MetaStub;
import io.switchboard.protocol.CallOptions;
import io.switchboard.protocol.Endpoint;
import io.switchboard.registry.CallSummary;
import io.switchboard.registry.ComponentEntry;
import io.switchboard.registry.RegistryClient;
import io.switchboard.registry.wire.CallStats;
import io.switchboard.registry.wire.CallStatsRow;
import io.switchboard.registry.wire.RenewWithStatsFaultException;
import io.switchboard.server.ComponentServer;
import io.switchboard.testing.conformance.ConformanceComponent;
import io.switchboard.testing.conformance.ConformanceImpl;
import io.switchboard.testing.conformance.ConformanceStub;
import io.switchboard.testing.conformance.DivideFaultException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;

/**
 * The console over HTTP: what it shows after real calls on both protocols, reported with the next
 * lease renewals; escaping of what components publish; the figures' checks on the registry side.
 */
class ConsoleTest {
    private static final HttpClient HTTP = HttpClient.newHttpClient();

    static HttpResponse<String> get(String url) throws Exception {
        return HTTP.send(HttpRequest.newBuilder(URI.create(url)).timeout(Duration.ofSeconds(10)).build(),
                HttpResponse.BodyHandlers.ofString());
    }

    @Test
    void showsInstancesEndpointsLeaseOperationsAndTheFiguresOfCallsOnBothProtocols() throws Exception {
        try (RegistryServer registry = RegistryServer.builder().start();
             ComponentServer server = ComponentServer.builder().protocols("grpc", "soap")
                     .registry(registry.endpoint(), null).lease(Duration.ofSeconds(1)).build()) {
            ComponentEntry entry = server.export(ConformanceComponent.skeleton(new ConformanceImpl()));
            try (Switchboard sb = Switchboard.connect(registry.endpoint())) {
                ConformanceStub c = sb.lookup(ConformanceComponent.DESCRIPTOR, ConformanceComponent::stub);
                ConformanceStub grpc = c.withOptions(CallOptions.DEFAULT.with(MetaStub.PROTOCOL, "grpc"));
                ConformanceStub soap = c.withOptions(CallOptions.DEFAULT.with(MetaStub.PROTOCOL, "soap"));
                for (int i = 0; i < 5; i++) {
                    grpc.increment(1);
                }
                for (int i = 0; i < 3; i++) {
                    soap.increment(1);
                }
                assertThrows(DivideFaultException.class, () -> soap.divide(1, 0));
            }
            // the report after next was counted after these calls (one heartbeat thread, one entry)
            long seen = registry.service().reportCount();
            assertTrue(registry.service().awaitReports(seen, 2, Duration.ofSeconds(20)), "no renewal carried figures");

            JsonObject live = JsonParser.parseString(get(registry.consoleUrl() + "/live.json").body()).getAsJsonObject();
            assertEquals("switchboard-console-live", live.get("format").getAsString());
            JsonObject instance = live.getAsJsonArray("instances").get(0).getAsJsonObject();
            assertEquals(entry.instanceId(), instance.get("instanceId").getAsString());
            assertEquals(1, instance.getAsJsonObject("lease").get("seconds").getAsInt());
            assertEquals(5, row(instance, "increment", "grpc").get("calls").getAsLong());
            assertEquals(3, row(instance, "increment", "soap").get("calls").getAsLong());
            JsonObject divide = row(instance, "divide", "soap");
            assertEquals(1, divide.get("calls").getAsLong());
            assertEquals(1, divide.get("faults").getAsLong());
            assertFalse(row(instance, "increment", "grpc").get("p50Micros").isJsonNull());

            HttpResponse<String> page = get(registry.consoleUrl());
            assertEquals(200, page.statusCode());
            assertTrue(page.headers().firstValue("Content-Type").orElse("").startsWith("text/html"));
            assertTrue(page.headers().firstValue("Content-Security-Policy").orElse("").contains("script-src 'self'"));
            String html = page.body();
            for (Endpoint e : entry.endpoints()) {
                assertTrue(html.contains(RegistryConsole.h(e.address())), e.address());
            }
            assertTrue(html.contains("1 s, renewed"), "the lease");
            assertTrue(html.contains("<span class=\"mark idempotent\">idempotent</span>"), "operation marks");
            assertTrue(html.contains("<span class=\"mark one-way\">one-way</span>"), "one-way mark");
            assertTrue(html.contains(">WSDL</a>") && html.contains(">.proto</a>") && html.contains(">XSD</a>"));
            String q = "?name=Conformance&instance=" + entry.instanceId();
            HttpResponse<String> xsd = get(registry.consoleUrl() + "/schema.xsd" + q);
            assertEquals(ConformanceComponent.DESCRIPTOR.schema(), xsd.body());
            assertTrue(xsd.headers().firstValue("Content-Type").orElse("").startsWith("text/plain"));
            assertTrue(get(registry.consoleUrl() + "/schema.proto" + q).body().contains("service Conformance"));
            assertEquals(404, get(registry.consoleUrl() + "/nothing").statusCode());
            assertEquals(405, HTTP.send(HttpRequest.newBuilder(URI.create(registry.consoleUrl()))
                    .POST(HttpRequest.BodyPublishers.ofString("x")).build(), HttpResponse.BodyHandlers.ofString())
                    .statusCode());
        }
    }

    private static JsonObject row(JsonObject instance, String operation, String protocol) {
        for (JsonElement r : instance.getAsJsonObject("report").getAsJsonArray("rows")) {
            JsonObject o = r.getAsJsonObject();
            if (o.get("operation").getAsString().equals(operation) && o.get("protocol").getAsString().equals(protocol)) {
                return o;
            }
        }
        throw new AssertionError("no row for " + operation + " on " + protocol + " in " + instance);
    }

    @Test
    void escapesWhatAComponentPublishesAndLinksOnlyHttp() throws Exception {
        try (RegistryServer registry = RegistryServer.builder().start();
             RegistryClient client = RegistryClient.connect(registry.endpoint())) {
            client.bind(new ComponentEntry("Evil", "i-1", List.of(new Endpoint("soap", "http://127.0.0.1:1/axis2/services/Evil")),
                    null, null, "javascript:alert(1)", null, List.of("<img src=x onerror=alert(1)>", "a\"b'c&"), 0));
            String html = get(registry.consoleUrl()).body();
            assertTrue(html.contains("&lt;img src=x onerror=alert(1)&gt;"), html);
            assertTrue(html.contains("a&quot;b&#39;c&amp;"));
            assertFalse(html.contains("<img"));
            assertFalse(html.toLowerCase().contains("href=\"javascript"), "only http(s) becomes a link");
            assertTrue(html.contains("none (until unbound)"));
            String json = get(registry.consoleUrl() + "/live.json").body();
            assertFalse(json.contains("<img"), "the JSON escapes markup too: " + json);
        }
    }

    @Test
    void figuresOutOfBoundsAreRefusedAndTheLeaseIsNotRenewedWithThem() throws Exception {
        try (RegistryServer registry = RegistryServer.builder().start();
             RegistryClient client = RegistryClient.connect(registry.endpoint())) {
            client.bind(new ComponentEntry("Leased", "i-1", List.of(new Endpoint("soap", "http://127.0.0.1:1/axis2/services/L")),
                    null, null, null, null, List.of(), 30));
            RegistryService service = registry.service();
            List<CallStatsRow> many = new ArrayList<>();
            for (int i = 0; i <= CallSummary.MAX_ROWS; i++) {
                many.add(wireRow("op" + i, "soap", 1, 0));
            }
            assertEquals("invalid", refusal(service, stats(many)));
            assertEquals("invalid", refusal(service, stats(List.of(wireRow("op", "soap", -1, 0)))));
            assertEquals("invalid", refusal(service, stats(List.of(wireRow("op", "soap", 1, 2)))));
            assertEquals("invalid", refusal(service, stats(List.of(wireRow("<b>", "soap", 1, 0)))));
            assertEquals("invalid", refusal(service, stats(List.of(wireRow("op", "soap", 1, 0), wireRow("op", "soap", 2, 0)))));
            assertNull(service.live().get("Leased").get("i-1").report(), "nothing refused was kept");

            assertTrue(service.renewWithStats("Leased", "i-1", null, stats(List.of(wireRow("op", "grpc", 4, 1)))));
            assertEquals(4, service.live().get("Leased").get("i-1").report().stats().row("op", "grpc").calls());
            assertFalse(service.renewWithStats("Other", "i-9", null, stats(List.of())), "not bound: no figures kept");
            assertNull(service.live().get("Other"));
            client.unbind("Leased", "i-1");
            assertNull(service.live().get("Leased"), "figures go with the lease");
        }
    }

    @Test
    void aComponentRenewsWithoutFiguresWhenTheRegistryDoesNotTakeThem() throws Exception {
        // a registry that knows no renewWithStats, as one older than it: the operation fails
        try (RegistryServer registry = RegistryServer.builder().start();
             RegistryClient client = RegistryClient.connect(registry.endpoint())) {
            client.bind(new ComponentEntry("Old", "i-1", List.of(new Endpoint("soap", "http://127.0.0.1:1/axis2/services/O")),
                    null, null, null, null, List.of(), 30));
            CallSummary figures = new CallSummary(1, List.of(new CallSummary.Row("op", "soap", 1, 0, 0, 0, 0, null, null,
                    null, null)));
            try (io.switchboard.protocol.spi.ProtocolServer old = io.switchboard.protocol.spi.Protocols.get("soap")
                    .newServer(io.switchboard.protocol.ServerSettings.defaults())) {
                RegistryService real = registry.service();
                io.switchboard.protocol.Skeleton skeleton = io.switchboard.registry.wire.RegistryComponent.skeleton(real);
                Endpoint at = old.export(new io.switchboard.protocol.Skeleton() {
                    @Override
                    public io.switchboard.idl.runtime.ServiceDescriptor descriptor() {
                        return skeleton.descriptor();
                    }

                    @Override
                    public Object invoke(io.switchboard.idl.runtime.OperationDescriptor op, Object request)
                            throws io.switchboard.idl.runtime.DeclaredFault {
                        if (op.name().equals("renewWithStats")) {
                            throw new UnsupportedOperationException("no such operation: renewWithStats");
                        }
                        return skeleton.invoke(op, request);
                    }
                });
                long before = real.reportCount();
                try (RegistryClient component = RegistryClient.connect(at.address())) {
                    assertTrue(component.renew("Old", "i-1", null, figures), "renewed without the figures");
                    assertTrue(component.renew("Old", "i-1", null, figures), "and again, not trying them for a while");
                }
                assertEquals(before, real.reportCount());
            }
        }
    }

    private static String refusal(RegistryService service, CallStats stats) {
        RenewWithStatsFaultException e = assertThrows(RenewWithStatsFaultException.class,
                () -> service.renewWithStats("Leased", "i-1", null, stats));
        assertNotNull(e.getFaultInfo().getReason());
        return e.getFaultInfo().getCode();
    }

    private static CallStats stats(List<CallStatsRow> rows) {
        CallStats s = new CallStats();
        s.setUptimeSeconds(10);
        s.setRows(rows);
        return s;
    }

    private static CallStatsRow wireRow(String op, String protocol, long calls, long faults) {
        CallStatsRow r = new CallStatsRow();
        r.setOperation(op);
        r.setProtocol(protocol);
        r.setCalls(calls);
        r.setFaults(faults);
        return r;
    }
}
