package io.switchboard.cli;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.netty.channel.epoll.Epoll;
import io.switchboard.client.Switchboard;
import io.switchboard.components.echo.EchoComponent;
import io.switchboard.components.echo.EchoService;
import io.switchboard.components.echo.EchoStub;
import io.switchboard.metastub.CallRecord;
import io.switchboard.metastub.FixedPolicy;
import io.switchboard.registry.ComponentEntry;
import io.switchboard.registry.server.RegistryServer;
import io.switchboard.server.ComponentServer;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import org.junit.jupiter.api.Test;

/**
 * A component on the client's host, found through the registry, is called over tcp on its Unix
 * domain socket, and the call record says so; with Unix sockets turned off on the client the same
 * calls go over TCP.
 */
class SameHostTcpTest {
    @Test
    void aComponentOnThisHostIsCalledOverItsUnixSocket() {
        String expected = Epoll.isAvailable() ? "unix" : "tcp";   // no socket without epoll: TCP, as the record says
        try (RegistryServer registry = RegistryServer.builder().secret("s").start();
             ComponentServer server = ComponentServer.builder().protocols("grpc", "tcp", "soap")
                     .registry(registry.endpoint(), "s").build()) {
            ComponentEntry entry = server.export(EchoComponent.skeleton(new EchoService()));
            String tcp = entry.endpoint("tcp").orElseThrow().address();
            assertEquals(Epoll.isAvailable(), tcp.contains("?unix="), tcp);

            assertEquals(List.of(expected, expected), viaOfTwoCalls(registry.endpoint()));

            System.setProperty("switchboard.tcp.unix", "false");
            try {
                assertEquals(List.of("tcp", "tcp"), viaOfTwoCalls(registry.endpoint()));
            } finally {
                System.clearProperty("switchboard.tcp.unix");
            }
        }
    }

    /** Looks Echo up in the registry and calls it twice under {@code fixed:tcp}; the records' {@code via}. */
    private static List<String> viaOfTwoCalls(String registryUrl) {
        List<CallRecord> records = new CopyOnWriteArrayList<>();
        try (Switchboard sb = Switchboard.builder(registryUrl).policy(new FixedPolicy("tcp")).listener(records::add)
                .connect()) {
            EchoStub echo = sb.lookup(EchoComponent.DESCRIPTOR, EchoComponent::stub);
            echo.empty();
            double[] back = echo.echoDoubles(new double[] {1.5, -0.0, Double.NaN});
            assertEquals(Double.doubleToRawLongBits(-0.0), Double.doubleToRawLongBits(back[1]));
        }
        assertEquals(List.of("tcp", "tcp"), records.stream().map(CallRecord::protocol).toList());
        assertTrue(records.stream().allMatch(CallRecord::succeeded), records.toString());
        return records.stream().map(CallRecord::via).toList();
    }
}
