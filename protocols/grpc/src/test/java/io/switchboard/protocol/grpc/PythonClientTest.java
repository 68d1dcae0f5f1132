package io.switchboard.protocol.grpc;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.switchboard.protocol.Endpoint;
import io.switchboard.protocol.spi.ProtocolServer;
import io.switchboard.protocol.spi.Protocols;
import io.switchboard.protocol.ServerSettings;
import io.switchboard.testing.conformance.ConformanceComponent;
import io.switchboard.testing.conformance.ConformanceImpl;
import io.switchboard.testing.conformance.LinkEntry;
import io.switchboard.testing.PythonPeers;
import java.io.InputStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
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
 * A Python client generated from the emitted {@code .proto} alone calls a component over gRPC and
 * gets exact answers. The client, {@code scripts/python/echo_grpc_client.py},
 * runs {@code grpc_tools.protoc} on the typed .proto and uses nothing but the generated messages
 * and stub: NaN payloads, -0.0 and infinities bit for bit, null and empty arrays, 100,000-node
 * lists and a cycle, a nested heterogeneous list, an n-d array, and the declared fault in the
 * status details. Its Python packages come from
 * {@code scripts/python-env.sh}: a virtual environment under the repository's {@code target/}
 * (PyPI, pinned versions) that {@code scripts/test-prerequisites.sh} builds before the tests. A
 * missing venv fails this test; only {@code SWITCHBOARD_TESTS_OFF=python} skips it.
 */
class PythonClientTest {
    @Test
    @Timeout(value = 10, unit = TimeUnit.MINUTES)
    void aClientGeneratedFromTheProtoAloneGetsExactAnswers(@TempDir Path dir) throws Exception {
        Path proto = dir.resolve("Conformance.proto");
        try (InputStream in = ConformanceComponent.class.getResourceAsStream("Conformance.proto")) {
            assertTrue(in != null, "Conformance.proto is not on the test class path");
            Files.copy(in, proto);
        }
        String python = PythonPeers.python(dir);

        Map<String, AtomicInteger> calls = new LinkedHashMap<>();
        for (String op : List.of("echoDoubles", "echoList", "ping", "echoMixed", "echoTensor", "divide")) {
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
                public io.switchboard.testing.conformance.EchoMixedResponse echoMixed(
                        io.switchboard.testing.conformance.Mixed list, List<io.switchboard.testing.conformance.Mixed> more) {
                    calls.get("echoMixed").incrementAndGet();
                    return super.echoMixed(list, more);
                }

                @Override
                public io.switchboard.testing.conformance.Tensor echoTensor(io.switchboard.testing.conformance.Tensor t) {
                    calls.get("echoTensor").incrementAndGet();
                    return t;
                }

                @Override
                public io.switchboard.testing.conformance.DivideResponse divide(long dividend, long divisor)
                        throws io.switchboard.testing.conformance.DivideFaultException {
                    calls.get("divide").incrementAndGet();
                    return super.divide(dividend, divisor);
                }
            }));
            Matcher port = Pattern.compile("^grpc://127\\.0\\.0\\.1:(\\d+)/Conformance(\\?unix=.*)?$").matcher(at.address());
            assertTrue(port.matches(), at.address());

            PythonPeers.Result client = PythonPeers.run(dir, "client", Duration.ofMinutes(3), Map.of(), python,
                    PythonPeers.script("echo_grpc_client.py").toString(),
                    "--proto", proto.toString(), "--target", "127.0.0.1:" + port.group(1), "--empty-op", "ping", "--mixed-op", "echoMixed",
                    "--tensor-op", "echoTensor", "--fault-op", "divide");
            String report = client.report("python client");

            // every case the client ran matched, and each of the operations was among them
            Map<String, Integer> perOperation = new LinkedHashMap<>();
            List<String> failed = new ArrayList<>();
            for (PythonPeers.Case c : PythonPeers.cases(client.out())) {
                perOperation.merge(c.operation(), 1, Integer::sum);
                if (!c.ok()) {
                    failed.add(c.name());
                }
            }
            assertEquals(List.of(), failed, report);
            assertTrue(client.out().contains("\"all_ok\": true"), report);
            assertEquals(0, client.exit(), report);
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
}
