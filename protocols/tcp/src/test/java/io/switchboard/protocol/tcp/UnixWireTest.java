package io.switchboard.protocol.tcp;

import static org.junit.jupiter.api.Assertions.assertEquals;

import io.switchboard.protocol.spi.UnixSockets;
import java.io.IOException;
import java.net.StandardProtocolFamily;
import java.net.UnixDomainSocketAddress;
import java.nio.channels.ServerSocketChannel;
import java.nio.file.Path;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.condition.EnabledOnOs;
import org.junit.jupiter.api.condition.OS;
import org.junit.jupiter.api.io.TempDir;

/** The channel wire over a Unix domain socket. */
@EnabledOnOs(OS.LINUX)
class UnixWireTest extends ChannelWireContract {
    @TempDir
    Path dir;

    @Override
    void open() throws IOException {
        Path socket = dir.resolve("w.sock");
        listener = ServerSocketChannel.open(StandardProtocolFamily.UNIX);
        listener.bind(UnixDomainSocketAddress.of(socket));
        wire = Wire.unix(socket);
        peer = listener.accept();
    }

    @Test
    void itSaysItGoesOverTheUnixSocket() {
        assertEquals(UnixSockets.VIA_UNIX, wire.via());
    }
}
