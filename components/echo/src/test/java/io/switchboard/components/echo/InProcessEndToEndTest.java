package io.switchboard.components.echo;

import io.switchboard.testing.ChildJvm;
import java.time.Duration;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.switchboard.metastub.CallRecord;
import io.switchboard.protocol.Endpoint;
import io.switchboard.protocol.local.LocalProtocolProvider;
import io.switchboard.registry.ComponentEntry;
import io.switchboard.server.ComponentServer;
import io.switchboard.registry.server.RegistryServer;
import io.switchboard.client.Switchboard;
import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * With the local protocol on the class path, a component served through {@link ComponentServer}
 * advertises a {@code local} endpoint in the registry; a client in the same JVM that finds it
 * through {@link Switchboard} calls it in process, and a client in another JVM (a child process)
 * never uses that endpoint.
 */
class InProcessEndToEndTest {
    @Test
    void sameJvmGoesLocalAndAnotherJvmDoesNot(@TempDir Path tmp) throws Exception {
        List<CallRecord> records = new CopyOnWriteArrayList<>();
        EchoService impl = new EchoService();
        try (RegistryServer registry = RegistryServer.builder().secret("t").start();
             ComponentServer server = ComponentServer.builder().registry(registry.endpoint(), "t")
                     .protocols("grpc", "local", "soap").build();   // tcp is on the class path for another test
             Switchboard sb = Switchboard.builder(registry.endpoint()).listener(records::add).connect()) {
            ComponentEntry entry = server.export(EchoComponent.skeleton(impl));
            assertEquals(List.of("grpc", "local", "soap"), entry.endpoints().stream().map(Endpoint::protocol).toList());
            assertTrue(LocalProtocolProvider.isLocal(entry.endpoint("local").orElseThrow()));

            EchoStub echo = sb.lookup(EchoComponent.DESCRIPTOR, EchoComponent::stub);
            echo.empty();
            double[] big = new double[200_000];
            big[7] = -0.0;
            big[8] = Double.NaN;
            double[] back = echo.echoDoubles(big);
            assertEquals(Double.doubleToRawLongBits(-0.0), Double.doubleToRawLongBits(back[7]));
            assertTrue(Double.isNaN(back[8]));
            assertEquals(2, echo.echoDoublesAsync(new double[] {1, 2}).get(1, TimeUnit.MINUTES).length);
            assertEquals(List.of("local", "local", "local"), records.stream().map(CallRecord::protocol).toList());
            assertTrue(records.get(0).reason().startsWith("in-process"), records.get(0).reason());
            long before = impl.calls();

            String out = runForeignClient(tmp, registry.endpoint());
            assertTrue(out.contains("server: grpc,local,soap\n"), out);
            assertTrue(out.lines().anyMatch(l -> l.startsWith("client: ") && l.contains("local")), "the child speaks local too: " + out);
            assertTrue(out.contains("candidates: grpc,soap\n"), "the other JVM's local endpoint is filtered: " + out);
            String protocols = out.lines().filter(l -> l.startsWith("protocols: ")).findFirst().orElseThrow();
            assertEquals(2, protocols.substring(11).split(",").length, out);
            assertTrue(!protocols.contains("local"), out);
            assertTrue(out.contains("exact: true"), out);
            assertEquals(before + 2, impl.calls(), "the other JVM's two calls ran here, once each");
        }
    }

    private static String runForeignClient(Path tmp, String registryUrl) throws Exception {
        try (ChildJvm child = ChildJvm.start(tmp.resolve("child.err"), ForeignClientMain.class, registryUrl)) {
            return child.outputUntilExit(Duration.ofMinutes(2));
        }
    }
}
