package io.switchboard.protocol.tcp;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.switchboard.protocol.spi.UnixSockets;
import java.io.IOException;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.StandardSocketOptions;
import java.nio.channels.ServerSocketChannel;
import org.junit.jupiter.api.Test;

/** The channel wire over plain TCP on loopback, and a connect to a port nobody listens on. */
class TcpChannelWireTest extends ChannelWireContract {
    @Override
    void open() throws IOException {
        listener = ServerSocketChannel.open();
        listener.bind(new InetSocketAddress(InetAddress.getLoopbackAddress(), 0));
        wire = Wire.tcp((InetSocketAddress) listener.getLocalAddress(), 5_000);
        peer = listener.accept();
    }

    @Test
    void itSaysItGoesOverTcpWithoutNaglesDelay() throws IOException {
        assertEquals(UnixSockets.VIA_TCP, wire.via());
        assertTrue(((Wire.ChannelWire) wire).option(StandardSocketOptions.TCP_NODELAY), "TCP_NODELAY on the wire's channel");
    }

    @Test
    void aConnectToAPortNobodyListensOnFails() throws IOException {
        int port;
        try (ServerSocketChannel gone = ServerSocketChannel.open()) {
            gone.bind(new InetSocketAddress(InetAddress.getLoopbackAddress(), 0));
            port = ((InetSocketAddress) gone.getLocalAddress()).getPort();
        }
        assertThrows(IOException.class, () -> Wire.tcp(new InetSocketAddress(InetAddress.getLoopbackAddress(), port), 5_000));
    }
}
