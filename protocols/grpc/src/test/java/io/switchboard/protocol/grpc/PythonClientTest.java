package io.switchboard.protocol.grpc;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.fail;

import io.switchboard.protocol.Endpoint;
import io.switchboard.protocol.ProtocolServer;
import io.switchboard.protocol.Protocols;
import io.switchboard.protocol.ServerSettings;
import io.switchboard.protocol.conformance.ConformanceComponent;
import io.switchboard.protocol.conformance.ConformanceImpl;
import io.switchboard.protocol.conformance.LinkEntry;
import java.io.IOException;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * A Python client generated from the emitted {@code .proto} alone calls a component over the bulk
 * protocol and gets exact answers (issue 3). The client, {@code scripts/python/echo_grpc_client.py},
 * runs {@code grpc_tools.protoc} on the .proto, encodes the packed binary layout its comments
 * describe, and compares every answer bit for bit. Its Python packages come from
 * {@code scripts/python-env.sh}: a virtual environment under the repository's {@code target/},
 * created on first use (PyPI, pinned versions) and reused afterwards. Python is part of this
 * project's machines, so a missing Python or a failed install fails this test; it is never skipped.
 */
class PythonClientTest {
    private static final Pattern CASE = Pattern.compile(
            "^\\s*\\{\"name\": \"([^\"]+)\", \"operation\": \"([^\"]+)\", \"ok\": (true|false)");

    @Test
    @Timeout(value = 10, unit = TimeUnit.MINUTES)
    void aClientGeneratedFromTheProtoAloneGetsExactAnswers(@TempDir Path dir) throws Exception {
        Path repo = repositoryRoot();
        Path proto = dir.resolve("Conformance.proto");
        try (InputStream in = ConformanceComponent.class.getResourceAsStream("Conformance.proto")) {
            assertTrue(in != null, "Conformance.proto is not on the test class path");
            Files.copy(in, proto);
        }

        Result env = run(dir, "python-env", 8, "bash", repo.resolve("scripts/python-env.sh").toString());
        if (env.exit != 0) {
            fail("scripts/python-env.sh failed (exit " + env.exit + "):\n" + env.out + env.err);
        }
        List<String> envLines = env.out.lines().filter(l -> !l.isBlank()).toList();
        String python = envLines.isEmpty() ? "" : envLines.get(envLines.size() - 1).trim();
        assertTrue(Files.isExecutable(Path.of(python)), "python-env.sh printed no python: " + env.out + env.err);

        Map<String, AtomicInteger> calls = new LinkedHashMap<>();
        for (String op : List.of("echoDoubles", "echoList", "ping", "echoMixed")) {
            calls.put(op, new AtomicInteger());
        }
        ProtocolServer server = Protocols.get("grpc").newServer(ServerSettings.defaults());
        try {
            Endpoint at = server.export(ConformanceComponent.skeleton(new ConformanceImpl() {
                @Override
                public double[] echoDoubles(double[] values) {
                    calls.get("echoDoubles").incrementAndGet();
                    return values;
                }

                @Override
                public LinkEntry echoList(LinkEntry head) {
                    calls.get("echoList").incrementAndGet();
                    return head;
                }

                @Override
                public void ping() {
                    calls.get("ping").incrementAndGet();
                }

                @Override
                public io.switchboard.protocol.conformance.EchoMixedResponse echoMixed(
                        io.switchboard.protocol.conformance.Mixed list, List<io.switchboard.protocol.conformance.Mixed> more) {
                    calls.get("echoMixed").incrementAndGet();
                    return super.echoMixed(list, more);
                }
            }));
            Matcher port = Pattern.compile("^grpc://127\\.0\\.0\\.1:(\\d+)/Conformance$").matcher(at.address());
            assertTrue(port.matches(), at.address());

            Result client = run(dir, "client", 3, python,
                    repo.resolve("scripts/python/echo_grpc_client.py").toString(),
                    "--proto", proto.toString(), "--target", "127.0.0.1:" + port.group(1), "--empty-op", "ping", "--mixed-op", "echoMixed");
            String report = "python client (exit " + client.exit + "):\n" + client.out + client.err;

            // every case the client ran matched, and each of the three operations was among them
            Map<String, Integer> perOperation = new LinkedHashMap<>();
            List<String> failed = new ArrayList<>();
            for (String line : client.out.lines().toList()) {
                Matcher m = CASE.matcher(line);
                if (m.find()) {
                    perOperation.merge(m.group(2), 1, Integer::sum);
                    if (!m.group(3).equals("true")) {
                        failed.add(m.group(1));
                    }
                }
            }
            assertEquals(List.of(), failed, report);
            assertTrue(client.out.contains("\"all_ok\": true"), report);
            assertEquals(0, client.exit, report);
            for (String op : calls.keySet()) {
                int sent = perOperation.getOrDefault(op, 0);
                assertTrue(sent > 0, "the client ran no case of " + op + ": " + report);
                // the answers came from the component: the server ran each call exactly once
                assertEquals(sent, calls.get(op).get(), "calls of " + op + " that reached the component");
            }
        } finally {
            server.close();
        }
    }

    private record Result(int exit, String out, String err) {
    }

    /** Runs a command with output to files (no pipe to fill up) and a time limit; kills it after. */
    private static Result run(Path dir, String name, int minutes, String... command)
            throws IOException, InterruptedException {
        Path out = dir.resolve(name + ".out");
        Path err = dir.resolve(name + ".err");
        Process p = new ProcessBuilder(command).redirectOutput(out.toFile()).redirectError(err.toFile())
                .redirectInput(ProcessBuilder.Redirect.from(new java.io.File("/dev/null"))).start();
        try {
            if (!p.waitFor(minutes, TimeUnit.MINUTES)) {
                p.destroyForcibly().waitFor(10, TimeUnit.SECONDS);
                fail(String.join(" ", command) + " did not finish in " + minutes + " min:\n"
                        + Files.readString(out, StandardCharsets.UTF_8) + Files.readString(err, StandardCharsets.UTF_8));
            }
        } finally {
            p.destroyForcibly();
        }
        return new Result(p.exitValue(), Files.readString(out, StandardCharsets.UTF_8),
                Files.readString(err, StandardCharsets.UTF_8));
    }

    /** The checkout's root: the first directory upwards from this module that holds scripts/python-env.sh. */
    private static Path repositoryRoot() {
        for (Path p = Path.of("").toAbsolutePath(); p != null; p = p.getParent()) {
            if (Files.isRegularFile(p.resolve("scripts/python-env.sh"))) {
                return p;
            }
        }
        throw new IllegalStateException("no scripts/python-env.sh above " + Path.of("").toAbsolutePath());
    }
}
