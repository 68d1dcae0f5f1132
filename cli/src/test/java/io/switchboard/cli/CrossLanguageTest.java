package io.switchboard.cli;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.fail;

import com.google.gson.JsonObject;
import com.google.gson.JsonParser;
import io.opentelemetry.api.trace.Span;
import io.opentelemetry.api.trace.SpanKind;
import io.opentelemetry.api.trace.propagation.W3CTraceContextPropagator;
import io.opentelemetry.context.Scope;
import io.opentelemetry.context.propagation.ContextPropagators;
import io.opentelemetry.sdk.OpenTelemetrySdk;
import io.opentelemetry.sdk.testing.exporter.InMemorySpanExporter;
import io.opentelemetry.sdk.trace.SdkTracerProvider;
import io.opentelemetry.sdk.trace.data.SpanData;
import io.opentelemetry.sdk.trace.export.SimpleSpanProcessor;
import io.switchboard.components.echo.EchoComponent;
import io.switchboard.components.echo.EchoService;
import io.switchboard.components.echo.EchoStub;
import io.switchboard.components.echo.LinkEntry;
import io.switchboard.metastub.CallRecord;
import io.switchboard.metastub.MetaStub;
import io.switchboard.metastub.Policies;
import io.switchboard.protocol.CallOptions;
import io.switchboard.protocol.ClientSettings;
import io.switchboard.protocol.ServerSettings;
import io.switchboard.protocol.RefusedException;
import io.switchboard.testing.Grpcurl;
import io.switchboard.testing.PythonPeers;
import io.switchboard.testing.TestCertificates;
import io.switchboard.registry.ComponentEntry;
import io.switchboard.registry.RegistryClient;
import io.switchboard.server.ComponentServer;
import io.switchboard.registry.server.RegistryServer;
import io.switchboard.client.Switchboard;
import java.io.IOException;
import java.io.InputStream;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;
import java.util.function.Supplier;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * Switchboard across languages, with a real registry and the Python programs of
 * {@code scripts/python/} as child processes in the project's venv ({@code scripts/python-env.sh}):
 * <ul>
 * <li>{@code echo_component.py}, the echo interface implemented in Python on the switchboard
 * package ({@code switchboard.serve}), binds itself in the registry through a zeep client built
 * from the registry's WSDL, serves gRPC and SOAP, renews its lease and unbinds on SIGTERM; a Java
 * meta-stub finds it by name and calls it over both;</li>
 * <li>{@code registry_echo_client.py}, knowing only the registry's address, looks a component up,
 * generates its gRPC messages and stub from the entry's .proto alone and a SOAP client from the
 * component's WSDL, and calls it over both: the Java echo component and the Python one;</li>
 * <li>grpcurl lists the Java component's service by reflection, finds its health SERVING and calls
 * echoDoubles with JSON.</li>
 * </ul>
 */
@Timeout(value = 10, unit = TimeUnit.MINUTES)
class CrossLanguageTest {
    private static final String SECRET = "cross-language-secret";
    private static final double[] EDGE = {-0.0, 0.0, Double.POSITIVE_INFINITY, Double.NEGATIVE_INFINITY,
        Double.MIN_VALUE, -Double.MIN_VALUE, Double.MAX_VALUE, Double.MIN_NORMAL, 0.1, 1e-310, -123456.789e-300};

    @TempDir
    static Path dir;
    private static String python;
    private static RegistryServer registry;
    private static ComponentServer javaEcho;
    private static EchoService javaEchoImpl;

    @BeforeAll
    static void start() throws Exception {
        python = PythonPeers.python(dir);
        registry = RegistryServer.builder().secret(SECRET).start();
        javaEcho = ComponentServer.builder().registry(registry.endpoint(), SECRET).build();
        javaEchoImpl = new EchoService();
        javaEcho.export(EchoComponent.skeleton(javaEchoImpl));
    }

    @AfterAll
    static void stop() {
        if (javaEcho != null) {
            javaEcho.close();
        }
        if (registry != null) {
            registry.close();
        }
    }

    /** The Python component's lifecycle in the registry, and a Java meta-stub calling it over SOAP. */
    @Test
    void aJavaMetaStubCallsTheComponentWrittenInPython() throws Exception {
        Path xsd = resource("echo.xsd");
        Path proto = typedProto();
        Path wsdl = resource("Echo.wsdl");
        Process component = startPythonComponent("py-component", "PyEcho", "--lease", "3", "--verbose-renew",
                "--max-message-bytes", "1000000");
        try {
            JsonObject serving = awaitEvent(component, "py-component", "serving", 1);
            String grpcAddress = serving.getAsJsonObject("endpoints").get("grpc").getAsString();
            String soapAddress = serving.getAsJsonObject("endpoints").get("soap").getAsString();
            String tcpAddress = serving.getAsJsonObject("endpoints").get("tcp").getAsString();

            // the entry it bound: its endpoints (tcp, gRPC, SOAP), the schema and .proto as written, a lease
            ComponentEntry entry = onlyEntry("PyEcho");
            assertEquals(List.of("tcp", "grpc", "soap"), entry.endpoints().stream().map(e -> e.protocol()).toList());
            assertEquals(grpcAddress, entry.endpoint("grpc").orElseThrow().address());
            assertEquals(Files.readString(xsd), entry.interfaceSchema());
            assertEquals(Files.readString(proto), entry.interfaceProto());
            assertEquals(soapAddress + "?wsdl", entry.wsdlUrl());
            assertEquals(3, entry.leaseSeconds());

            List<CallRecord> records = new CopyOnWriteArrayList<>();
            Map<String, Integer> sent = new TreeMap<>();
            try (Switchboard sb = Switchboard.builder(registry.endpoint()).listener(records::add).connect()) {
                EchoStub echo = sb.lookup("PyEcho", EchoComponent.DESCRIPTOR, EchoComponent::stub);
                for (String protocol : List.of("soap")) {   // gRPC: aJavaMetaStubCallsThePythonComponentOverGrpc
                    EchoStub pinned = echo.withOptions(CallOptions.DEFAULT.with(MetaStub.PROTOCOL, protocol));
                    String address = "grpc".equals(protocol) ? grpcAddress : soapAddress;
                    // gRPC carries NaN payloads; XML has one NaN, so SOAP gets the canonical one
                    double nan = "grpc".equals(protocol) ? Double.longBitsToDouble(0x7ff0_0000_0000_0abcL) : Double.NaN;
                    double[] values = append(EDGE, nan);
                    assertBits(values, call(records, sent, protocol, address, "echoDoubles", () -> pinned.echoDoubles(values)));
                    assertArrayEquals(new double[0], call(records, sent, protocol, address, "echoDoubles",
                            () -> pinned.echoDoubles(new double[0])));
                    assertNull(call(records, sent, protocol, address, "echoDoubles", () -> pinned.echoDoubles(null)));
                    LinkEntry cycle = cycleOfThree();
                    assertSameCycle(cycle, call(records, sent, protocol, address, "echoList", () -> pinned.echoList(cycle)));
                    assertNull(call(records, sent, protocol, address, "echoList", () -> pinned.echoList(null)));
                    call(records, sent, protocol, address, "empty", () -> {
                        pinned.empty();
                        return null;
                    });
                }
                // no pin: the size policy sends the small call over tcp
                EchoStub sized = echo.withOptions(CallOptions.DEFAULT.with(MetaStub.POLICY, Policies.byName("size")));
                call(records, sent, "tcp", tcpAddress, "empty", () -> {
                    sized.empty();
                    return null;
                });
            }

            // refusals, bounded and named, that never reach the operation (the counts below exclude them)
            try (Switchboard sb = Switchboard.connect(registry.endpoint())) {
                EchoStub echo = sb.lookup("PyEcho", EchoComponent.DESCRIPTOR, EchoComponent::stub);
                double[] tooBig = new double[300_000];   // 1.2 MB as SOAP text: over 1 MB
                for (String protocol : List.of("soap")) {
                    RefusedException e = assertThrows(RefusedException.class, () -> echo.withOptions(
                            CallOptions.DEFAULT.with(MetaStub.PROTOCOL, protocol)).echoDoubles(tooBig), protocol);
                    assertEquals("size-limit", e.reason(), protocol + ": " + e);
                }
            }
            HttpResponse<String> dtd = HttpClient.newHttpClient().send(HttpRequest.newBuilder(URI.create(soapAddress))
                    .header("Content-Type", "text/xml; charset=UTF-8")
                    .header("SOAPAction", "urn:switchboard:echo/echoDoubles")
                    .POST(HttpRequest.BodyPublishers.ofString("<?xml version=\"1.0\"?><!DOCTYPE e [<!ENTITY x \"1.5\">]>"
                            + "<e:Envelope xmlns:e=\"http://schemas.xmlsoap.org/soap/envelope/\"><e:Body>"
                            + "<echoDoubles xmlns=\"urn:switchboard:echo\"><values>&x;</values></echoDoubles></e:Body></e:Envelope>"))
                    .build(), HttpResponse.BodyHandlers.ofString());
            assertEquals(500, dtd.statusCode(), dtd.body());
            assertTrue(dtd.body().contains("reason=\"malformed\"") && dtd.body().contains("DTDs are not accepted"), dtd.body());

            // the lease: renewed while it serves, so the entry outlives several lease lengths
            awaitEvent(component, "py-component", "renewed", 4);
            assertEquals(entry.instanceId(), onlyEntry("PyEcho").instanceId());

            component.destroy();  // SIGTERM: the component unbinds, stops and reports what it ran
            assertTrue(component.waitFor(60, TimeUnit.SECONDS), "the Python component did not stop on SIGTERM");
            JsonObject stopped = awaitEvent(component, "py-component", "stopped", 1);
            assertEquals(0, component.exitValue(), PythonPeers.err(dir, "py-component"));
            assertEquals(1, stopped.get("unbound").getAsInt());
            Map<String, Integer> ran = new TreeMap<>();
            stopped.getAsJsonObject("calls").entrySet().forEach(e -> ran.put(e.getKey(), e.getValue().getAsInt()));
            assertEquals(sent, ran, "calls the Python component ran, by protocol and operation");
            assertEquals(List.of(), registry.service().store().lookup("PyEcho"), "unbound on exit");
        } finally {
            component.destroyForcibly();
        }
    }

    @Test
    void thePythonComponentCannotBindWithoutTheSharedSecret() throws Exception {
        PythonPeers.Result refused = PythonPeers.run(dir, "py-component-no-secret", Duration.ofMinutes(2),
                Map.of("SWITCHBOARD_SECRET", "not-the-secret"), python, PythonPeers.script("echo_component.py").toString(),
                "--registry", registry.endpoint(), "--name", "PyEchoNoSecret", "--xsd", resource("echo.xsd").toString(),
                "--proto", typedProto().toString(), "--wsdl", resource("Echo.wsdl").toString());
        assertEquals(2, refused.exit(), refused.report("echo_component.py"));
        assertTrue(refused.err().contains("the registry refused the bind") && refused.err().contains("code unauthorized"),
                refused.report("echo_component.py"));
        assertEquals(List.of(), registry.service().store().lookup("PyEchoNoSecret"));
    }

    @Test
    void aPythonClientThatKnowsOnlyTheRegistryCallsTheJavaComponent() throws Exception {
        long before = javaEchoImpl.calls();
        List<PythonPeers.Case> cases = runRegistryClient("py-client", "Echo");
        // each case is one call, and each reached the Java component once
        assertEquals(cases.size(), javaEchoImpl.calls() - before, "calls the Java component ran");
    }

    /** The same client, from the registry entry alone, calls the component written in Python: typed gRPC on both sides. */
    @Test
    void aPythonClientThatKnowsOnlyTheRegistryCallsThePythonComponent() throws Exception {
        Process component = startPythonComponent("py-peer-component", "PyEchoPeer");
        try {
            awaitEvent(component, "py-peer-component", "serving", 1);
            assertTrue(onlyEntry("PyEchoPeer").interfaceProto().contains(PythonPeers.TYPED_PROTO_MARK));
            List<PythonPeers.Case> cases = runRegistryClient("py-peer-client", "PyEchoPeer");
            component.destroy();
            assertTrue(component.waitFor(60, TimeUnit.SECONDS), "the Python component did not stop on SIGTERM");
            JsonObject stopped = awaitEvent(component, "py-peer-component", "stopped", 1);
            int ran = stopped.getAsJsonObject("calls").entrySet().stream().mapToInt(e -> e.getValue().getAsInt()).sum();
            assertEquals(cases.size(), ran, "each case reached the Python component once");
        } finally {
            component.destroyForcibly();
        }
    }

    /**
     * registry_echo_client.py against the component bound as {@code name}: every case matched, and
     * the cases cover every echo operation over gRPC (the edge doubles, 100,000-node lists and a
     * cycle, a nested heterogeneous list, an n-d array, the declared fault) and the SOAP ones.
     */
    private static List<PythonPeers.Case> runRegistryClient(String processName, String name) throws Exception {
        PythonPeers.Result client = PythonPeers.run(dir, processName, Duration.ofMinutes(5), Map.of(), python,
                PythonPeers.script("registry_echo_client.py").toString(), "--registry", registry.endpoint(), "--name", name,
                "--mixed-op", "echoMixed", "--tensor-op", "echoTensor", "--fault-op", "divide");
        String report = client.report("registry_echo_client.py");
        List<PythonPeers.Case> cases = PythonPeers.cases(client.out());
        List<String> failed = cases.stream().filter(c -> !c.ok()).map(PythonPeers.Case::name).toList();
        assertEquals(List.of(), failed, report);
        assertEquals(0, client.exit(), report);
        assertTrue(client.out().contains("\"all_ok\": true"), report);
        for (String op : List.of("echoDoubles", "echoList", "empty", "echoMixed", "echoTensor", "divide")) {
            assertTrue(cases.stream().anyMatch(c -> "grpc".equals(c.protocol()) && op.equals(c.operation())),
                    "no " + op + " over grpc: " + report);
        }
        for (String op : List.of("echoDoubles", "echoList", "empty")) {
            assertTrue(cases.stream().anyMatch(c -> "soap".equals(c.protocol()) && op.equals(c.operation())),
                    "no " + op + " over soap: " + report);
        }
        for (String name2 : List.of("doubles_nan_payloads", "list_100k_nodes", "list_100k_nodes_cycle", "mixed_nested",
                "tensor_2x3x1", "divide_declared_fault")) {
            assertTrue(cases.stream().anyMatch(c -> c.name().equals(name2)), name2 + ": " + report);
        }
        return cases;
    }

    /**
     * With mutual TLS on the registry and the component, the same client (SOAP only: its gRPC is
     * plain text) builds zeep clients from the registry's and the component's WSDL through a
     * requests session holding the client certificate and the CA, checks that the component's WSDL
     * names its https:// address, and echoes doubles and lists at it.
     */
    @Test
    void aZeepClientBuiltFromTheWsdlOfAComponentServedWithMutualTlsEchoesDoubles() throws Exception {
        TestCertificates certs = TestCertificates.get();
        try (RegistryServer secure = RegistryServer.builder().secret(SECRET).tls(certs.serverMutual()).start();
             RegistryClient binder = RegistryClient.connect(List.of(secure.endpoint()), SECRET,
                     ClientSettings.defaults().withTls(certs.client()));
             ComponentServer server = ComponentServer.builder().protocols("grpc", "soap")
                     .settings(ServerSettings.defaults().withTls(certs.serverMutual())).registry(binder).build()) {
            EchoService impl = new EchoService();
            ComponentEntry entry = server.export(EchoComponent.skeleton(impl));
            String soap = entry.endpoint("soap").orElseThrow().address();
            assertTrue(soap.startsWith("https://"), soap);

            TestCertificates.Pem pem = certs.clientPem();
            PythonPeers.Result client = PythonPeers.run(dir, "py-tls-client", Duration.ofMinutes(3), Map.of(), python,
                    PythonPeers.script("registry_echo_client.py").toString(), "--registry", secure.endpoint(),
                    "--protocols", "soap", "--cacert", pem.ca().toString(), "--cert", pem.certificate().toString(),
                    "--key", pem.key().toString());
            String report = client.report("registry_echo_client.py over mutual TLS");
            List<PythonPeers.Case> cases = PythonPeers.cases(client.out());
            assertEquals(List.of(), cases.stream().filter(c -> !c.ok()).map(PythonPeers.Case::name).toList(), report);
            assertEquals(0, client.exit(), report);
            assertTrue(cases.stream().filter(c -> c.operation().equals("echoDoubles")).count() >= 4, report);
            assertTrue(cases.stream().allMatch(c -> "soap".equals(c.protocol())), report);
            assertEquals(cases.size(), impl.calls(), "each case reached the component once, over TLS");
        }
    }

    /**
     * The Python component served over mutual TLS with {@code authz=}, a policy naming certificate A:
     * a Java client presenting A is answered over tcp, gRPC and SOAP; one presenting B (trusted too)
     * is a {@link io.switchboard.protocol.PermissionDeniedException} on each, and the Python component
     * ran none of B's calls.
     */
    @Test
    void aPythonComponentsPolicyAllowsCertificateAAndDeniesCertificateB() throws Exception {
        TestCertificates certificates = TestCertificates.get();
        Path policy = dir.resolve("python-authz.json");
        Files.writeString(policy, """
                {"name": "team-a-echoes", "allow_rules": [{"name": "team-a",
                  "source": {"principals": ["%s"]}, "request": {"paths": ["/switchboard.echo.Echo/*"]}}]}"""
                .formatted(TestCertificates.SPIFFE_ID));
        Process component = startPythonComponent("py-authz-component", "PyEchoAuthz",
                "--tls-keystore", certificates.serverKeyStore().toString(),
                "--tls-truststore", certificates.trustStore().toString(),
                "--tls-password-file", certificates.passwordFile().toString(), "--authz", policy.toString());
        try {
            awaitEvent(component, "py-authz-component", "serving", 1);
            ComponentEntry entry = onlyEntry("PyEchoAuthz");
            Map<String, Integer> sent = new TreeMap<>();
            assertEquals(List.of("tcps", "grpcs", "https"), entry.endpoints().stream()
                    .map(e -> e.address().substring(0, e.address().indexOf(':'))).toList(), entry.endpoints().toString());
            for (String protocol : List.of("tcp", "grpc", "soap")) {
                try (MetaStub a = MetaStub.builder(EchoComponent.DESCRIPTOR).endpoints(entry.endpoints())
                        .settings(ClientSettings.defaults().withTls(certificates.spiffeClient())).build();
                     MetaStub b = MetaStub.builder(EchoComponent.DESCRIPTOR).endpoints(entry.endpoints())
                        .settings(ClientSettings.defaults().withTls(certificates.dnsClient())).build()) {
                    CallOptions pin = CallOptions.DEFAULT.with(MetaStub.PROTOCOL, protocol);
                    assertArrayEquals(new double[] {1.5, -0.0}, EchoComponent.stub(a).withOptions(pin)
                            .echoDoubles(new double[] {1.5, -0.0}), "certificate A over " + protocol);
                    sent.merge(protocol + " echoDoubles", 1, Integer::sum);
                    io.switchboard.protocol.PermissionDeniedException denied = assertThrows(
                            io.switchboard.protocol.PermissionDeniedException.class,
                            () -> EchoComponent.stub(b).withOptions(pin).echoDoubles(new double[] {2}),
                            "certificate B over " + protocol);
                    assertEquals("/switchboard.echo.Echo/echoDoubles", denied.path(), protocol);
                    assertEquals(io.switchboard.protocol.PermissionDeniedException.DENIED, denied.reason(), protocol);
                }
            }
            component.destroy();
            assertTrue(component.waitFor(60, TimeUnit.SECONDS), "the Python component did not stop on SIGTERM");
            JsonObject stopped = awaitEvent(component, "py-authz-component", "stopped", 1);
            Map<String, Integer> ran = new TreeMap<>();
            stopped.getAsJsonObject("calls").entrySet().forEach(e -> ran.put(e.getKey(), e.getValue().getAsInt()));
            assertEquals(sent, ran, "the Python component ran A's calls and none of B's");
        } finally {
            component.destroyForcibly();
        }
    }

    /** A Java meta-stub calls the Python component over typed gRPC: every value form, and the declared fault. */
    @Test
    void aJavaMetaStubCallsThePythonComponentOverGrpc() throws Exception {
        Process component = startPythonComponent("py-grpc-component", "PyEchoGrpc");
        try {
            JsonObject serving = awaitEvent(component, "py-grpc-component", "serving", 1);
            String grpcAddress = serving.getAsJsonObject("endpoints").get("grpc").getAsString();
            List<CallRecord> records = new CopyOnWriteArrayList<>();
            Map<String, Integer> sent = new TreeMap<>();
            try (Switchboard sb = Switchboard.builder(registry.endpoint()).listener(records::add).connect()) {
                EchoStub echo = sb.lookup("PyEchoGrpc", EchoComponent.DESCRIPTOR, EchoComponent::stub)
                        .withOptions(CallOptions.DEFAULT.with(MetaStub.PROTOCOL, "grpc"));
                double[] values = append(EDGE, Double.longBitsToDouble(0x7ff0_0000_0000_0abcL));
                assertBits(values, call(records, sent, "grpc", grpcAddress, "echoDoubles", () -> echo.echoDoubles(values)));
                assertArrayEquals(new double[0], call(records, sent, "grpc", grpcAddress, "echoDoubles",
                        () -> echo.echoDoubles(new double[0])));
                assertNull(call(records, sent, "grpc", grpcAddress, "echoDoubles", () -> echo.echoDoubles(null)));
                LinkEntry cycle = cycleOfThree();
                assertSameCycle(cycle, call(records, sent, "grpc", grpcAddress, "echoList", () -> echo.echoList(cycle)));
                LinkEntry head = null;
                for (int i = 99_999; i >= 0; i--) {
                    LinkEntry e = node(i, (short) i, -i, i, i * 0.5, null);
                    e.setNextLink(head);
                    head = e;
                }
                LinkEntry longList = head;
                LinkEntry back = call(records, sent, "grpc", grpcAddress, "echoList", () -> echo.echoList(longList));
                int length = 0;
                for (LinkEntry e = back; e != null; e = e.getNextLink()) {
                    assertEquals(length++, e.getLlong());
                }
                assertEquals(100_000, length);
                io.switchboard.components.echo.Tensor tensor = io.switchboard.components.echo.Tensor.of(
                        new double[][] {{1, -0.0}, {Double.NaN, Double.NEGATIVE_INFINITY}});
                io.switchboard.components.echo.Tensor tensorBack = call(records, sent, "grpc", grpcAddress, "echoTensor",
                        () -> echo.echoTensor(tensor));
                assertArrayEquals(tensor.getShape(), tensorBack.getShape());
                assertBits(tensor.getValues(), tensorBack.getValues());
                io.switchboard.components.echo.Mixed mixed = io.switchboard.components.echo.Mixed.of(Double.NaN, 7L, "x",
                        io.switchboard.components.echo.Mixed.of(io.switchboard.components.echo.Mixed.of()));
                assertEquals(mixed.getItems().size(), call(records, sent, "grpc", grpcAddress, "echoMixed",
                        () -> echo.echoMixed(mixed)).getItems().size());
                io.switchboard.components.echo.DivideFaultException fault = assertThrows(
                        io.switchboard.components.echo.DivideFaultException.class, () -> echo.divide(5, 0));
                assertEquals(5, fault.getFaultInfo().getDividend());
                call(records, sent, "grpc", grpcAddress, "empty", () -> {
                    echo.empty();
                    return null;
                });
            }
            component.destroy();
            assertTrue(component.waitFor(60, TimeUnit.SECONDS), "the Python component did not stop on SIGTERM");
        } finally {
            component.destroyForcibly();
        }
    }

    /**
     * The Java client over tcp to a component written in Python: brpc's frames both ways, doubles
     * bit for bit (a NaN payload included), a cycle, the declared fault as its typed exception, and
     * a request over the Python server's frame limit refused without running.
     */
    @Test
    void aJavaMetaStubCallsThePythonComponentOverTcp() throws Exception {
        Process component = startPythonComponent("py-tcp-component", "PyEchoTcp");
        try {
            JsonObject serving = awaitEvent(component, "py-tcp-component", "serving", 1);
            String tcpAddress = serving.getAsJsonObject("endpoints").get("tcp").getAsString();
            List<CallRecord> records = new CopyOnWriteArrayList<>();
            Map<String, Integer> sent = new TreeMap<>();
            try (Switchboard sb = Switchboard.builder(registry.endpoint()).listener(records::add).connect()) {
                EchoStub echo = sb.lookup("PyEchoTcp", EchoComponent.DESCRIPTOR, EchoComponent::stub)
                        .withOptions(CallOptions.DEFAULT.with(MetaStub.PROTOCOL, "tcp"));
                double[] values = append(EDGE, Double.longBitsToDouble(0x7ff0_0000_0000_0abcL));
                assertBits(values, call(records, sent, "tcp", tcpAddress, "echoDoubles", () -> echo.echoDoubles(values)));
                assertArrayEquals(new double[0], call(records, sent, "tcp", tcpAddress, "echoDoubles",
                        () -> echo.echoDoubles(new double[0])));
                assertNull(call(records, sent, "tcp", tcpAddress, "echoDoubles", () -> echo.echoDoubles(null)));
                LinkEntry cycle = cycleOfThree();
                assertSameCycle(cycle, call(records, sent, "tcp", tcpAddress, "echoList", () -> echo.echoList(cycle)));
                io.switchboard.components.echo.DivideFaultException fault = assertThrows(
                        io.switchboard.components.echo.DivideFaultException.class, () -> echo.divide(5, 0));
                assertEquals(5, fault.getFaultInfo().getDividend());
                call(records, sent, "tcp", tcpAddress, "empty", () -> {
                    echo.empty();
                    return null;
                });
                // requests compressed as brpc's clients compress them, answered in their compression
                // (snappy through the cramjam package, which the project's venv has)
                for (io.switchboard.protocol.tcp.TcpCompression compression : List.of(
                        io.switchboard.protocol.tcp.TcpCompression.GZIP, io.switchboard.protocol.tcp.TcpCompression.ZLIB,
                        io.switchboard.protocol.tcp.TcpCompression.SNAPPY)) {
                    EchoStub packed = echo.withOptions(CallOptions.DEFAULT.with(MetaStub.PROTOCOL, "tcp")
                            .with(io.switchboard.protocol.tcp.TcpCompression.OPTION, compression));
                    assertBits(values, call(records, sent, "tcp", tcpAddress, "echoDoubles",
                            () -> packed.echoDoubles(values)));
                }
            }
            component.destroy();
            assertTrue(component.waitFor(60, TimeUnit.SECONDS), "the Python component did not stop on SIGTERM");
            JsonObject stopped = awaitEvent(component, "py-tcp-component", "stopped", 1);
            assertEquals(1, stopped.getAsJsonObject("calls").get("tcp divide").getAsInt(), stopped.toString());
            Map<String, Integer> ran = new TreeMap<>();
            stopped.getAsJsonObject("calls").entrySet().forEach(e -> ran.put(e.getKey(), e.getValue().getAsInt()));
            ran.remove("tcp divide");
            assertEquals(sent, ran, "calls the Python component ran over tcp, each once");
        } finally {
            component.destroyForcibly();
        }
    }

    /** grpcurl, knowing only the Java component's address: its service by reflection, and its health. */
    /**
     * A Java caller traced with OpenTelemetry calls the Python component over each protocol; the
     * Python component, whose process has no tracer of its own, calls a traced Java component once
     * over each protocol from its operation. The trace context crosses both ways on every wire: the
     * Java component's three server spans are in the caller's trace, children of the caller's span
     * to the Python hop (which passes the context on, having no span of its own).
     */
    @Test
    void aTraceCrossesAPythonHopBothWaysOnEveryProtocol() throws Exception {
        InMemorySpanExporter exporter = InMemorySpanExporter.create();
        try (OpenTelemetrySdk sdk = OpenTelemetrySdk.builder()
                .setTracerProvider(SdkTracerProvider.builder().addSpanProcessor(SimpleSpanProcessor.create(exporter)).build())
                .setPropagators(ContextPropagators.create(W3CTraceContextPropagator.getInstance())).build();
             ComponentServer traced = ComponentServer.builder().registry(registry.endpoint(), SECRET).tracing(sdk).build()) {
            traced.export("TracedEcho", EchoComponent.skeleton(new EchoService()));
            Process relay = startPythonComponent("py-relay", "PyRelay", "--relay-to", "TracedEcho");
            try (Switchboard sb = Switchboard.builder(registry.endpoint()).tracing(sdk).connect()) {
                awaitEvent(relay, "py-relay", "serving", 1);
                EchoStub toPython = sb.lookup("PyRelay", EchoComponent.DESCRIPTOR, EchoComponent::stub);
                for (String protocol : List.of("tcp", "grpc", "soap")) {
                    exporter.reset();
                    Span root = sdk.getTracer("test").spanBuilder("caller").startSpan();
                    try (Scope scope = root.makeCurrent()) {
                        assertArrayEquals(new double[] {-0.0, 1.5}, toPython.withOptions(CallOptions.DEFAULT
                                .with(MetaStub.PROTOCOL, protocol)).echoDoubles(new double[] {-0.0, 1.5}));
                    } finally {
                        root.end();
                    }
                    List<SpanData> spans = exporter.getFinishedSpanItems();
                    List<SpanData> attempts = spans.stream().filter(x -> x.getKind() == SpanKind.CLIENT
                            && x.getParentSpanId().equals(root.getSpanContext().getSpanId())).toList();
                    assertEquals(1, attempts.size(), protocol + ": " + spans);
                    SpanData attempt = attempts.get(0);
                    List<SpanData> inJava = spans.stream().filter(x -> x.getKind() == SpanKind.SERVER).toList();
                    assertEquals(List.of("grpc", "soap", "tcp"), inJava.stream()
                            .map(x -> x.getAttributes().get(io.switchboard.metastub.TracingInterceptor.PROTOCOL)).sorted().toList(),
                            "the Java component's calls from the Python hop that came over " + protocol + ": " + spans);
                    for (SpanData server : inJava) {
                        assertEquals(root.getSpanContext().getTraceId(), server.getTraceId(), "in the caller's trace: " + server);
                        assertEquals(attempt.getSpanId(), server.getParentSpanId(), "under the call to the Python hop: " + server);
                    }
                }
            } finally {
                relay.destroy();
                relay.waitFor(30, TimeUnit.SECONDS);
            }
        }
    }

    @Test
    void grpcurlListsTheServiceByReflectionAndTheHealthCheckAnswersServing() throws Exception {
        String target = hostPort(onlyEntry("Echo").endpoint("grpc").orElseThrow().address());
        PythonPeers.Result list = Grpcurl.run(dir, "grpcurl-list", Duration.ofMinutes(1), "-plaintext", target, "list");
        assertEquals(0, list.exit(), list.report("grpcurl list"));
        assertTrue(list.out().lines().anyMatch("switchboard.echo.Echo"::equals), list.report("grpcurl list"));
        assertTrue(list.out().lines().anyMatch("grpc.health.v1.Health"::equals), list.report("grpcurl list"));
        PythonPeers.Result health = Grpcurl.run(dir, "grpcurl-health", Duration.ofMinutes(1), "-plaintext",
                "-d", "{\"service\": \"switchboard.echo.Echo\"}", target, "grpc.health.v1.Health/Check");
        assertEquals(0, health.exit(), health.report("grpcurl health"));
        assertEquals("SERVING", JsonParser.parseString(health.out()).getAsJsonObject().get("status").getAsString(),
                health.report("grpcurl health"));
    }

    /**
     * grpcurl calls echoDoubles with JSON, NaN, -0 and the infinities as protobuf's JSON spells
     * them: on the Python component from the typed .proto, and on the Java one by reflection.
     */
    @Test
    void grpcurlCallsEchoDoublesWithJson() throws Exception {
        String request = "{\"values\": [\"NaN\", -0, \"Infinity\", \"-Infinity\", 5e-324, 1.5]}";
        Process component = startPythonComponent("py-grpcurl-component", "PyEchoCurl");
        try {
            JsonObject serving = awaitEvent(component, "py-grpcurl-component", "serving", 1);
            String target = hostPort(serving.getAsJsonObject("endpoints").get("grpc").getAsString());
            Path proto = typedProto();
            PythonPeers.Result call = Grpcurl.run(dir, "grpcurl-python", Duration.ofMinutes(1), "-plaintext",
                    "-import-path", proto.getParent().toString(), "-proto", proto.getFileName().toString(),
                    "-d", request, target, "switchboard.echo.Echo/echoDoubles");
            assertEchoedDoubles(call, "grpcurl on the Python component");
        } finally {
            component.destroyForcibly();
        }
        String target = hostPort(onlyEntry("Echo").endpoint("grpc").orElseThrow().address());
        assertEchoedDoubles(Grpcurl.run(dir, "grpcurl-java", Duration.ofMinutes(1), "-plaintext", "-d", request, target,
                "switchboard.echo.Echo/echoDoubles"), "grpcurl on the Java component");
    }

    private static void assertEchoedDoubles(PythonPeers.Result call, String what) {
        assertEquals(0, call.exit(), call.report(what));
        com.google.gson.JsonArray values = JsonParser.parseString(call.out()).getAsJsonObject().getAsJsonArray("values");
        assertEquals(6, values.size(), call.report(what));
        assertEquals("NaN", values.get(0).getAsString());
        assertEquals(Double.doubleToRawLongBits(-0.0), Double.doubleToRawLongBits(values.get(1).getAsDouble()), call.out());
        assertEquals("Infinity", values.get(2).getAsString());
        assertEquals("-Infinity", values.get(3).getAsString());
        assertEquals(Double.MIN_VALUE, values.get(4).getAsDouble());
        assertEquals(1.5, values.get(5).getAsDouble());
    }

    private static String hostPort(String address) {
        return address.replaceFirst("^[a-z]+://", "").replaceFirst("/.*$", "");
    }

    /** The Python echo component, bound as {@code name}, with the typed .proto and the build's schema and WSDL. */
    private static Process startPythonComponent(String processName, String name, String... more) throws IOException {
        List<String> command = new ArrayList<>(List.of(python, PythonPeers.script("echo_component.py").toString(),
                "--registry", registry.endpoint(), "--name", name, "--xsd", resource("echo.xsd").toString(),
                "--proto", typedProto().toString(), "--wsdl", resource("Echo.wsdl").toString()));
        command.addAll(List.of(more));
        return PythonPeers.start(dir, processName, Map.of("SWITCHBOARD_SECRET", SECRET), command.toArray(String[]::new));
    }

    /** The typed .proto of the echo interface, as the build wrote it. */
    private static Path typedProto() throws IOException {
        return resource("Echo.proto");
    }

    /** Makes one call and checks the meta-stub's record of it: the protocol, the Python server's address, no error. */
    private static <T> T call(List<CallRecord> records, Map<String, Integer> sent, String protocol, String address,
                              String operation, Supplier<T> call) {
        int before = records.size();
        T answer = call.get();
        List<CallRecord> mine = new ArrayList<>(records.subList(before, records.size()));
        assertEquals(1, mine.size(), "records of one " + operation + ": " + mine);
        CallRecord r = mine.get(0);
        assertEquals(operation, r.operation());
        assertEquals(protocol, r.protocol(), r.toString());
        assertEquals(address, r.address(), r.toString());
        assertNull(r.error(), r.toString());
        sent.merge(protocol + " " + operation, 1, Integer::sum);
        return answer;
    }

    private static JsonObject awaitEvent(Process process, String name, String event, int count) throws Exception {
        long deadline = System.nanoTime() + TimeUnit.MINUTES.toNanos(2);
        while (true) {
            List<JsonObject> seen = new ArrayList<>();
            for (String line : PythonPeers.out(dir, name).lines().toList()) {
                if (line.startsWith("{\"event\": \"" + event + "\"")) {
                    seen.add(JsonParser.parseString(line).getAsJsonObject());
                }
            }
            if (seen.size() >= count) {
                return seen.get(count - 1);
            }
            if (!process.isAlive() && !"stopped".equals(event) || System.nanoTime() > deadline) {
                fail("no " + count + " '" + event + "' from " + name + ":\n" + PythonPeers.out(dir, name)
                        + PythonPeers.err(dir, name));
            }
            Thread.sleep(100);
        }
    }

    private static ComponentEntry onlyEntry(String name) {
        List<ComponentEntry> entries = registry.service().store().lookup(name);
        assertEquals(1, entries.size(), name + ": " + entries);
        return entries.get(0);
    }

    /** The echo interface's documents as the build wrote them beside EchoComponent, copied to files. */
    private static Path resource(String name) throws IOException {
        Path file = dir.resolve(name);
        if (!Files.exists(file)) {
            try (InputStream in = EchoComponent.class.getResourceAsStream(name)) {
                assertNotNull(in, name + " is not on the class path");
                Files.copy(in, file);
            }
        }
        return file;
    }

    private static double[] append(double[] values, double last) {
        double[] out = java.util.Arrays.copyOf(values, values.length + 1);
        out[values.length] = last;
        return out;
    }

    private static void assertBits(double[] sent, double[] got) {
        assertNotNull(got);
        assertEquals(sent.length, got.length);
        for (int i = 0; i < sent.length; i++) {
            assertEquals(Double.doubleToRawLongBits(sent[i]), Double.doubleToRawLongBits(got[i]), "index " + i);
        }
    }

    private static LinkEntry cycleOfThree() {
        LinkEntry a = node(Long.MAX_VALUE, (short) -32768, Integer.MIN_VALUE, -0.0f, -0.0, "h\u00e9llo \u2713 \uD834\uDD1E");
        LinkEntry b = node(Long.MIN_VALUE, Short.MAX_VALUE, Integer.MAX_VALUE, Float.POSITIVE_INFINITY, Double.MIN_VALUE, null);
        LinkEntry c = node(0, (short) 0, 0, 0.1f, Double.NEGATIVE_INFINITY, "");
        a.setNextLink(b);
        b.setNextLink(c);
        c.setNextLink(a);
        return a;
    }

    private static LinkEntry node(long l, short s, int i, float f, double d, String text) {
        LinkEntry e = new LinkEntry();
        e.setLlong(l);
        e.setSshort(s);
        e.setIint(i);
        e.setFfloat(f);
        e.setDdouble(d);
        e.setSstring(text);
        return e;
    }

    private static void assertSameCycle(LinkEntry sent, LinkEntry got) {
        LinkEntry a = sent;
        LinkEntry b = got;
        for (int k = 0; k < 3; k++, a = a.getNextLink(), b = b.getNextLink()) {
            assertNotNull(b, "node " + k);
            assertEquals(a.getLlong(), b.getLlong(), "node " + k);
            assertEquals(a.getSshort(), b.getSshort(), "node " + k);
            assertEquals(a.getIint(), b.getIint(), "node " + k);
            assertEquals(Float.floatToRawIntBits(a.getFfloat()), Float.floatToRawIntBits(b.getFfloat()), "node " + k);
            assertEquals(Double.doubleToRawLongBits(a.getDdouble()), Double.doubleToRawLongBits(b.getDdouble()), "node " + k);
            assertEquals(a.getSstring(), b.getSstring(), "node " + k);
        }
        assertSame(got, b, "the third node links back to the first");
    }
}
