package io.switchboard.cli;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.switchboard.components.echo.Echo;
import io.switchboard.components.echo.EchoComponent;
import io.switchboard.registry.ComponentEntry;
import io.switchboard.registry.RegistryClient;
import io.switchboard.client.Switchboard;
import io.switchboard.testing.ChildJvm;
import io.switchboard.testing.TestCertificates;
import java.io.BufferedReader;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.InputStreamReader;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The command line as a user runs it: a registry and an echo server in separate JVMs, found and
 * called from here, and both stopped with SIGTERM; the server unbinds itself on the way out.
 */
class CommandLineProcessTest {
    private final List<Process> processes = new ArrayList<>();

    @TempDir
    Path dir;

    @AfterEach
    void killLeftovers() {
        processes.forEach(Process::destroyForcibly);
    }

    private Process start(Path secret, String... args) throws IOException {
        List<String> cmd = new ArrayList<>(ChildJvm.javaCommand(List.of("-Xmx256m"), Main.class, args));
        cmd.addAll(List.of("--secret-file", secret.toString()));
        Process p = new ProcessBuilder(cmd).redirectError(dir.resolve("stderr-" + processes.size() + ".txt").toFile())
                .start();
        processes.add(p);
        return p;
    }

    /** Reads the process's output until a line starts with {@code prefix}; returns the rest of that line. */
    static String await(Process p, String prefix) throws IOException {
        BufferedReader r = new BufferedReader(new InputStreamReader(p.getInputStream(), StandardCharsets.UTF_8));
        for (String line = r.readLine(); line != null; line = r.readLine()) {
            if (line.startsWith(prefix)) {
                return line.substring(prefix.length()).trim();
            }
        }
        throw new IllegalStateException("process ended before printing '" + prefix + "'");
    }

    @Test
    void registryAndServerInTheirOwnProcessesStopCleanlyOnSigterm() throws Exception {
        Path secret = Files.writeString(dir.resolve("secret"), "s3cret-for-test\n");
        Process registry = start(secret, "registry", "--port", "0", "--store", "file:" + dir.resolve("registry.json"));
        String url = await(registry, "registry");
        assertTrue(url.startsWith("http://127.0.0.1:") && url.endsWith("/axis2/services/Registry"), url);

        Process server = start(secret, "serve", "echo", "--registry", url);
        await(server, "serving");
        try (RegistryClient reader = RegistryClient.connect(url); Switchboard sb = Switchboard.connect(url)) {
            List<ComponentEntry> entries = reader.lookup("Echo");
            assertEquals(1, entries.size());
            Echo echo = sb.lookup(EchoComponent.DESCRIPTOR, EchoComponent::stub);
            assertEquals(-0.0, echo.echoDoubles(new double[] {-0.0})[0]);

            server.destroy();   // SIGTERM
            assertTrue(server.waitFor(30, TimeUnit.SECONDS), "server stops on SIGTERM");
            assertTrue(reader.lookup("Echo").isEmpty(), "the server unbound itself before it stopped");
        }
        registry.destroy();
        assertTrue(registry.waitFor(30, TimeUnit.SECONDS), "registry stops on SIGTERM");
    }

    /**
     * Every command takes the same TLS flags: a registry and a server that require client
     * certificates, a client that presents one, one that does not and one whose certificate their
     * revocation list revokes, both refused; the password never shows in any output.
     */
    @Test
    void registryServeCallAndListSpeakMutualTlsWithTheSameFlags() throws Exception {
        TestCertificates certs = TestCertificates.get();
        Path secret = Files.writeString(dir.resolve("secret"), "s3cret-for-test\n");
        Path revoked = certs.revocationList(dir, certs.spiffeClientKeyStore());
        String[] serverTls = {"--tls-keystore", certs.serverKeyStore().toString(), "--tls-truststore",
                certs.trustStore().toString(), "--tls-password-file", certs.passwordFile().toString(),
                "--tls-crl", revoked.toString()};
        Process registry = start(secret, concat(new String[] {"registry", "--port", "0", "--store", "memory"}, serverTls));
        String url = await(registry, "registry");
        assertTrue(url.startsWith("https://127.0.0.1:"), url);
        Process server = start(secret, concat(new String[] {"serve", "echo", "--registry", url}, serverTls));
        await(server, "serving");

        String[] clientTls = {"--tls-keystore", certs.clientKeyStore().toString(), "--tls-truststore",
                certs.trustStore().toString(), "--tls-password-file", certs.passwordFile().toString()};
        String table = run(concat(new String[] {"list", "--registry", url}, clientTls));
        assertTrue(table.contains("grpcs://127.0.0.1:") && table.contains("https://127.0.0.1:"), table);
        for (String protocol : List.of("soap", "grpc")) {
            String out = run(concat(new String[] {"call", "Echo", "echoDoubles", "values=1.5 -0.0", "--registry", url,
                    "--protocol", protocol}, clientTls));
            assertEquals("values = [1.5, -0.0]", out.strip(), protocol);
        }
        PrintStream original = System.err;
        ByteArrayOutputStream err = new ByteArrayOutputStream();
        System.setErr(new PrintStream(err, true, StandardCharsets.UTF_8));
        try {
            assertEquals(1, Main.run("list", "--registry", url, "--tls-truststore", certs.trustStore().toString(),
                    "--tls-password-file", certs.passwordFile().toString()), "without a key: refused");
            assertEquals(1, Main.run("list", "--registry", url, "--tls-keystore", certs.spiffeClientKeyStore().toString(),
                    "--tls-truststore", certs.trustStore().toString(), "--tls-password-file",
                    certs.passwordFile().toString()), "a revoked key: refused");
            assertEquals(1, Main.run("list", "--registry", url, "--tls-crl", revoked.toString()),
                    "a revocation list without a trust store");
            assertTrue(err.toString(StandardCharsets.UTF_8).contains("--tls-crl needs --tls-truststore"), err.toString());
        } finally {
            System.setErr(original);
        }
        server.destroy();
        registry.destroy();
        assertTrue(server.waitFor(30, TimeUnit.SECONDS) && registry.waitFor(30, TimeUnit.SECONDS));
        String password = new String(TestCertificates.PASSWORD);
        assertTrue(!err.toString(StandardCharsets.UTF_8).contains(password) && !table.contains(password));
        try (var files = Files.list(dir)) {
            for (Path f : files.filter(f -> f.getFileName().toString().startsWith("stderr-")).toList()) {
                assertTrue(!Files.readString(f).contains(password), "no password in " + f);
            }
        }
    }

    /**
     * The token flags end to end: a registry and a component server in their own JVMs verify
     * tokens; {@code serve} binds with its token file, and cannot with a bad one (so it sends it);
     * {@code call} with a good token is answered on every protocol, with a token for another
     * audience refused; no token appears in any output. (That each protocol carries the token is
     * the identity suite's to show.)
     */
    @Test
    void registryAndServeVerifyTheTokenThatCallSendsOnEveryProtocol() throws Exception {
        io.switchboard.testing.TestTokens tokens = io.switchboard.testing.TestTokens.get();
        Path secret = Files.writeString(dir.resolve("secret"), "s3cret-for-test\n");
        String[] verify = {"--jwt-keys", tokens.jwksFile().toString(), "--jwt-issuer",
                io.switchboard.testing.TestTokens.ISSUER, "--jwt-audience", io.switchboard.testing.TestTokens.AUDIENCE};
        String serverToken = tokens.valid("echo-server");
        Path serverTokenFile = Files.writeString(dir.resolve("server-token"), serverToken + "\n");
        Process registry = start(secret, concat(new String[] {"registry", "--port", "0", "--store", "memory"}, verify));
        String url = await(registry, "registry");
        Process server = start(secret, concat(new String[] {"serve", "echo", "--registry", url, "--token-file",
                serverTokenFile.toString()}, verify));
        await(server, "serving");
        Path expiredFile = Files.writeString(dir.resolve("expired-token"), tokens.hostile("echo-server").get("expired"));
        Path refusedErr = dir.resolve("stderr-" + processes.size() + ".txt");
        Process refused = start(secret, concat(new String[] {"serve", "echo", "--registry", url, "--token-file",
                expiredFile.toString()}, verify));
        assertTrue(refused.waitFor(120, TimeUnit.SECONDS), "serve with an expired token did not stop");
        assertTrue(refused.exitValue() != 0, "serve bound with an expired token");
        assertTrue(Files.readString(refusedErr).contains("bearer token"), Files.readString(refusedErr));

        String good = tokens.valid("alice");
        Path goodFile = Files.writeString(dir.resolve("good-token"), good);
        for (String protocol : List.of("soap", "grpc", "tcp")) {
            String out = run("call", "Echo", "echoDoubles", "values=2.5", "--registry", url, "--protocol", protocol,
                    "--token-file", goodFile.toString());
            assertEquals("values = [2.5]", out.strip(), protocol);
        }
        String bad = tokens.hostile("alice").get("wrong audience");
        Path badFile = Files.writeString(dir.resolve("bad-token"), bad);
        PrintStream original = System.err;
        ByteArrayOutputStream err = new ByteArrayOutputStream();
        System.setErr(new PrintStream(err, true, StandardCharsets.UTF_8));
        try {
            assertTrue(Main.run("call", "Echo", "echoDoubles", "values=2.5", "--registry", url, "--token-file",
                    badFile.toString()) != 0, "a token for another audience: refused");
        } finally {
            System.setErr(original);
        }
        server.destroy();
        registry.destroy();
        assertTrue(server.waitFor(30, TimeUnit.SECONDS) && registry.waitFor(30, TimeUnit.SECONDS));
        String printed = err.toString(StandardCharsets.UTF_8);
        assertTrue(printed.contains("bearer token"), printed);
        for (String token : List.of(good, bad, serverToken)) {
            assertTrue(!printed.contains(token), "a token in call's output");
            try (var files = Files.list(dir)) {
                for (Path f : files.filter(f -> f.getFileName().toString().startsWith("stderr-")).toList()) {
                    assertTrue(!Files.readString(f).contains(token), "a token in " + f);
                }
            }
        }
    }

    private static String[] concat(String[] a, String[] b) {
        String[] all = java.util.Arrays.copyOf(a, a.length + b.length);
        System.arraycopy(b, 0, all, a.length, b.length);
        return all;
    }

    @Test
    void listAndLookupPrintEntriesReadablyAndAsJson() throws Exception {
        try (var registry = io.switchboard.registry.server.RegistryServer.builder().start();
             var server = io.switchboard.server.ComponentServer.builder().protocols("soap")
                     .registry(registry.endpoint(), null).build()) {
            server.export(EchoComponent.skeleton(new io.switchboard.components.echo.EchoService()));
            String table = run("list", "--registry", registry.endpoint());
            assertTrue(table.contains("NAME") && table.contains("Echo") && table.contains("soap"), table);
            String json = run("lookup", "Echo", "--registry", registry.endpoint(), "--json");
            var parsed = com.google.gson.JsonParser.parseString(json).getAsJsonArray();
            assertEquals(1, parsed.size());
            assertEquals("Echo", parsed.get(0).getAsJsonObject().get("name").getAsString());
            assertEquals("soap", parsed.get(0).getAsJsonObject().getAsJsonArray("endpoints").get(0).getAsJsonObject()
                    .get("protocol").getAsString());
            assertEquals(3, Main.run("lookup", "Nothing", "--registry", registry.endpoint()));
        }
    }

    /** {@code call}: an operation by name, values in their XML form, over the protocol asked for. */
    @Test
    void callRunsAnOperationByNameWithoutGeneratedCode() throws Exception {
        try (var registry = io.switchboard.registry.server.RegistryServer.builder().start();
             var server = io.switchboard.server.ComponentServer.builder().registry(registry.endpoint(), null).build()) {
            var impl = new io.switchboard.components.echo.EchoService();
            server.export(EchoComponent.skeleton(impl));
            for (String protocol : List.of("soap", "grpc", "tcp")) {
                String out = run("call", "Echo", "echoDoubles", "values=1.5 -0.0 NaN -INF 4.9E-324", "--registry",
                        registry.endpoint(), "--protocol", protocol);
                assertEquals("values = [1.5, -0.0, NaN, -Infinity, 4.9E-324]", out.strip(), protocol);
            }
            assertEquals("", run("call", "Echo", "empty", "--registry", registry.endpoint()).strip());
            assertEquals(4, impl.calls(), "each call ran once");
            assertEquals(2, Main.run("call", "Echo", "echoDubbles", "--registry", registry.endpoint()));
            assertEquals(1, Main.run("call", "Echo", "echoDoubles", "values=1 x", "--registry", registry.endpoint()),
                    "a value that is not a double is an error");
            assertEquals(4, impl.calls(), "nothing was sent for bad input");
        }
    }

    @Test
    void theRegistryKeepsEntriesInItsFileAcrossARestartAndRefusesABadFile() throws Exception {
        Path secret = Files.writeString(dir.resolve("secret"), "s3cret-for-test\n");
        Path store = dir.resolve("state/registry.json");
        Process first = start(secret, "registry", "--port", "0", "--store", "file:" + store);
        try (RegistryClient writer = RegistryClient.connect(await(first, "registry"), "s3cret-for-test")) {
            writer.bind(new ComponentEntry("Printer", "p1", List.of(new io.switchboard.protocol.Endpoint("soap",
                    "http://127.0.0.1:1/axis2/services/Printer")), null, null, null));
        }
        first.destroy();
        assertTrue(first.waitFor(30, TimeUnit.SECONDS));

        Process second = start(secret, "registry", "--port", "0", "--store", "file:" + store);
        try (RegistryClient reader = RegistryClient.connect(await(second, "registry"))) {
            assertEquals(1, reader.lookup("Printer").size(), "the entry came back with the restarted registry");
        }
        second.destroy();
        assertTrue(second.waitFor(30, TimeUnit.SECONDS));
        assertTrue(!Files.readString(store).contains("s3cret"), "the store holds entries only");

        Files.writeString(store, "{\"format\": \"switchboard-registry\", \"vers");   // torn
        PrintStream original = System.err;
        ByteArrayOutputStream err = new ByteArrayOutputStream();
        System.setErr(new PrintStream(err, true, StandardCharsets.UTF_8));
        try {
            assertEquals(1, Main.run("registry", "--port", "0", "--store", "file:" + store));
            assertEquals(1, Main.run("registry", "--port", "0", "--store", "etcd://somewhere"));
        } finally {
            System.setErr(original);
        }
        String message = err.toString(StandardCharsets.UTF_8);
        assertTrue(message.contains(store.toString()) && message.contains("not readable"), message);
        assertTrue(message.contains("unknown store 'etcd://somewhere'"), message);
        assertTrue(Files.readString(store).endsWith("vers"), "a bad store is left as it was");
    }

    private static String run(String... args) {
        PrintStream original = System.out;
        ByteArrayOutputStream buffer = new ByteArrayOutputStream();
        System.setOut(new PrintStream(buffer, true, StandardCharsets.UTF_8));
        try {
            assertEquals(0, Main.run(args));
        } finally {
            System.setOut(original);
        }
        return buffer.toString(StandardCharsets.UTF_8);
    }
}
