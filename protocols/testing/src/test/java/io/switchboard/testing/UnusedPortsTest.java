package io.switchboard.testing;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.net.Socket;
import org.junit.jupiter.api.Test;

class UnusedPortsTest {
    /**
     * The ports the kernel picks itself, for a listener on port 0 and for a client's end of a
     * connection, are all in its ephemeral range; a port given out here never is, so no test's
     * server or client of this machine can be handed it meanwhile.
     */
    @Test
    void aPortIsOutsideTheRangeTheKernelHandsOutItself() throws IOException {
        int low = UnusedPorts.ephemeralLow();
        try (ServerSocket anyPort = new ServerSocket(0, 1, InetAddress.getLoopbackAddress());
             Socket client = new Socket(InetAddress.getLoopbackAddress(), anyPort.getLocalPort())) {
            assertTrue(anyPort.getLocalPort() >= low, anyPort.getLocalPort() + " is below " + low);
            assertTrue(client.getLocalPort() >= low, client.getLocalPort() + " is below " + low);
        }
        for (int i = 0; i < 50; i++) {
            int port = UnusedPorts.port();
            assertTrue(port >= UnusedPorts.LOWEST && port < low, port + " is not in " + UnusedPorts.LOWEST + "-" + low);
            try (ServerSocket s = new ServerSocket(port, 1, InetAddress.getLoopbackAddress())) {
                assertEquals(port, s.getLocalPort());
            }
        }
    }
}
