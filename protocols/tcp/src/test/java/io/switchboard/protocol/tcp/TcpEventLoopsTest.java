package io.switchboard.protocol.tcp;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.netty.channel.epoll.Epoll;
import io.switchboard.protocol.ClientSettings;
import io.switchboard.protocol.Endpoint;
import io.switchboard.protocol.ServerSettings;
import io.switchboard.protocol.spi.ProtocolClient;
import io.switchboard.protocol.spi.Transport;
import io.switchboard.protocol.spi.UnixSockets;
import io.switchboard.testing.conformance.ConformanceComponent;
import io.switchboard.testing.conformance.ConformanceImpl;
import org.junit.jupiter.api.Test;

/** {@code -Dswitchboard.tcp.eventLoops}: how many event loops a tcp server runs, and what it refuses. */
class TcpEventLoopsTest {
    @Test
    void oneEventLoopServesConnectionsOverTcpAndTheUnixSocketAlike() {
        TcpServer server = new TcpServer(ServerSettings.defaults(), TcpLimits.defaults(), 1);
        try (server;
             ProtocolClient overSocket = new TcpProtocolProvider().newClient(ClientSettings.defaults());
             ProtocolClient overTcp = new TcpProtocolProvider().newClient(ClientSettings.defaults())) {
            Endpoint at = server.export(ConformanceComponent.skeleton(new ConformanceImpl()));
            assertEquals(1, server.eventLoopCount());
            double[] values = {1.5, -0.0, Double.NaN};
            Transport socketWay = overSocket.connect(ConformanceComponent.DESCRIPTOR, at);
            Transport tcpWay = overTcp.connect(ConformanceComponent.DESCRIPTOR, UnixSockets.overTcp(at));
            assertArrayEquals(values, ConformanceComponent.stub(socketWay).echoDoubles(values));
            assertArrayEquals(values, ConformanceComponent.stub(tcpWay).echoDoubles(values));
            assertEquals(Epoll.isAvailable() ? UnixSockets.VIA_UNIX : UnixSockets.VIA_TCP, socketWay.via());
            assertEquals(UnixSockets.VIA_TCP, tcpWay.via());
        }
    }

    @Test
    void unsetIsNettysDefaultOfTwoPerCore() {
        TcpServer server = new TcpServer(ServerSettings.defaults(), TcpLimits.defaults(), TcpServer.eventLoops(null));
        try (server) {
            server.export(ConformanceComponent.skeleton(new ConformanceImpl()));
            assertEquals(2 * Runtime.getRuntime().availableProcessors(), server.eventLoopCount());
        }
    }

    @Test
    void theValueIsAWholeNumberFromZeroTo1024() {
        assertEquals(0, TcpServer.eventLoops(null));
        assertEquals(0, TcpServer.eventLoops(" "));
        assertEquals(1, TcpServer.eventLoops("1"));
        assertEquals(8, TcpServer.eventLoops(" 8 "));
        for (String bad : new String[] {"-1", "1025", "two", "1.5", "99999999999"}) {
            IllegalArgumentException e = assertThrows(IllegalArgumentException.class, () -> TcpServer.eventLoops(bad));
            assertTrue(e.getMessage().contains("-Dswitchboard.tcp.eventLoops") && e.getMessage().contains("'" + bad + "'"),
                    e.getMessage());
        }
        assertThrows(IllegalArgumentException.class,
                () -> new TcpServer(ServerSettings.defaults(), TcpLimits.defaults(), -1));
    }
}
