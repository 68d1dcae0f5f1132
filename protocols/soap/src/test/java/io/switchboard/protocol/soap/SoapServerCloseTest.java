package io.switchboard.protocol.soap;

import static org.junit.jupiter.api.Assertions.assertTrue;

import io.switchboard.protocol.ServerSettings;
import io.switchboard.testing.conformance.ConformanceComponent;
import io.switchboard.testing.conformance.ConformanceImpl;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.net.URI;
import java.util.concurrent.atomic.AtomicBoolean;
import org.junit.jupiter.api.Test;

/**
 * Closing a SOAP server frees its port and stops its threads even when the listener's graceful
 * shutdown throws, as Jetty 12.0's does when it checks a connection whose request completes on
 * another thread at that moment (a flake hunt saw the {@code NullPointerException} from
 * {@code HttpChannelState.onIdleTimeout} escape {@code close()}, with Jetty left running).
 */
class SoapServerCloseTest {
    @Test
    void aListenerWhoseShutdownThrowsStillLeavesThePortFreeAndJettyStopped() throws Exception {
        SoapServer server = (SoapServer) new SoapProtocolProvider().newServer(ServerSettings.defaults());
        URI uri = URI.create(server.export(ConformanceComponent.skeleton(new ConformanceImpl())).address());
        AtomicBoolean raced = new AtomicBoolean();
        server.connector().afterShutdown = () -> {
            if (raced.compareAndSet(false, true)) {   // once: Jetty's stop shuts the listener down again
                throw new NullPointerException("Cannot invoke \"ChannelResponse.lockedFailWrite(Throwable)\" because \"this._response\" is null");
            }
        };
        server.close();

        assertTrue(raced.get(), "the listener's shutdown threw");
        assertTrue(server.connector().getServer().isStopped(), "Jetty stopped");
        try (ServerSocket again = new ServerSocket()) {
            again.bind(new InetSocketAddress(InetAddress.getByName(uri.getHost()), uri.getPort()));
            assertTrue(again.isBound(), "the port is free");
        }
    }
}
