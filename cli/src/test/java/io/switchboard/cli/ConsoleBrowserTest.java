package io.switchboard.cli;

import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.switchboard.client.Switchboard;
import io.switchboard.components.echo.EchoComponent;
import io.switchboard.components.echo.EchoService;
import io.switchboard.components.echo.EchoStub;
import io.switchboard.components.echo.DivideFaultException;
import io.switchboard.metastub.MetaStub;
import io.switchboard.protocol.CallOptions;
import io.switchboard.protocol.Endpoint;
import io.switchboard.registry.ComponentEntry;
import io.switchboard.registry.server.RegistryServer;
import io.switchboard.server.ComponentServer;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * The registry's console in a real browser (headless Chromium): after calls through a meta-stub on
 * gRPC and SOAP, and the lease renewals that report them, the page shows the echo component, its
 * endpoints, its lease and the counts, with the script's refresh applied. Also takes the screenshot
 * in docs/console.png ({@code target/console.png}; copied by hand when the page changes).
 */
class ConsoleBrowserTest {
    @BeforeAll
    static void browser() throws Exception {
        HeadlessChromium.requireInstalled();
    }

    @Test
    void aPersonSeesTheEchoComponentItsEndpointsLeaseAndCallCounts() throws Exception {
        try (RegistryServer registry = RegistryServer.builder().start();
             ComponentServer server = ComponentServer.builder().protocols("grpc", "soap")
                     .registry(registry.endpoint(), null).lease(Duration.ofSeconds(2)).build()) {
            ComponentEntry entry = server.export(EchoComponent.skeleton(new EchoService()));
            try (Switchboard sb = Switchboard.connect(registry.endpoint())) {
                EchoStub echo = sb.lookup(EchoComponent.DESCRIPTOR, EchoComponent::stub);
                EchoStub grpc = echo.withOptions(CallOptions.DEFAULT.with(MetaStub.PROTOCOL, "grpc"));
                EchoStub soap = echo.withOptions(CallOptions.DEFAULT.with(MetaStub.PROTOCOL, "soap"));
                for (int i = 0; i < 7; i++) {
                    grpc.echoDoubles(new double[] {i, -0.0, Double.NaN});
                }
                for (int i = 0; i < 4; i++) {
                    soap.echoDoubles(new double[] {i});
                }
                for (int i = 0; i < 3; i++) {
                    soap.empty();
                }
                for (int i = 0; i < 2; i++) {
                    assertThrows(DivideFaultException.class, () -> grpc.divide(1, 0));   // the declared fault
                }
            }
            // the second report from now was counted after every call above
            long seen = registry.service().reportCount();
            assertTrue(registry.service().awaitReports(seen, 2, Duration.ofSeconds(30)), "no renewal carried figures");

            String dom = HeadlessChromium.dumpDom(registry.consoleUrl(), 5000);
            assertTrue(dom.contains("<h2>Echo</h2>"), dom);
            for (Endpoint e : entry.endpoints()) {
                assertTrue(dom.contains(e.address().replace("&", "&amp;")), "endpoint " + e.address() + " in\n" + dom);
            }
            assertTrue(Pattern.compile("2 s, renewed \\d+ s ago, runs out in \\d+ s").matcher(dom).find(),
                    "the lease in\n" + dom);
            assertTrue(dom.contains("live, updated"), "the script refreshed the figures:\n" + dom);
            assertCount(dom, "echoDoubles", "grpc", 7);
            assertCount(dom, "echoDoubles", "soap", 4);
            assertCount(dom, "empty", "soap", 3);
            assertTrue(Pattern.compile("<tr><td>divide</td><td>grpc</td><td class=\"n\">2</td><td class=\"n\">[^<]*</td>"
                    + "<td class=\"n\">2</td>").matcher(dom).find(), "2 calls of divide, 2 faults:\n" + dom);

            Path png = Path.of("target", "console.png");
            HeadlessChromium.screenshot(registry.consoleUrl(), png, 1280, 800, 5000);
            assertTrue(Files.size(png) > 10_000, "a screenshot with something on it");
        }
    }

    /** The row of the live table: operation, protocol, then the count of calls. */
    private static void assertCount(String dom, String operation, String protocol, long calls) {
        Matcher m = Pattern.compile("<tr><td>" + operation + "</td><td>" + protocol + "</td><td class=\"n\">(\\d+)</td>")
                .matcher(dom);
        assertTrue(m.find(), "no row for " + operation + " on " + protocol + " in\n" + dom);
        assertTrue(Long.parseLong(m.group(1)) == calls, operation + " on " + protocol + ": " + m.group(1) + " calls, "
                + "expected " + calls);
    }
}
