package io.switchboard.protocol.soap;

import static org.junit.jupiter.api.Assertions.assertTrue;

import io.switchboard.protocol.ServerSettings;
import io.switchboard.testing.conformance.ConformanceComponent;
import io.switchboard.testing.conformance.ConformanceImpl;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.net.URI;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;

/**
 * A connection whose idle check throws is still closed at the next one. Jetty 12.0's check throws a
 * {@code NullPointerException} from {@code HttpChannelState.onIdleTimeout} when the connection's
 * request completes on another thread as the timeout fires; out of the check, it ended the
 * connection's idle checks for good, and the connection stayed open while it idled.
 */
class SoapIdleCheckTest {
    private static final Duration IDLE = Duration.ofMillis(300);
    /** How long the test waits for the close: many idle timeouts, far below the test's patience. */
    private static final int BOUND_MILLIS = 10_000;

    @Test
    void aConnectionWhoseIdleCheckThrowsOnceIsClosedAtTheNextCheck() throws Exception {
        try (SoapServer server = (SoapServer) new SoapProtocolProvider().newServer(
                ServerSettings.defaults().withIdleTimeout(IDLE))) {
            URI uri = URI.create(server.export(ConformanceComponent.skeleton(new ConformanceImpl())).address());
            AtomicInteger checks = new AtomicInteger();
            server.connector().beforeIdleExpiry = () -> {
                if (checks.incrementAndGet() == 1) {
                    throw new NullPointerException("Cannot invoke \"ChannelResponse.lockedFailWrite(Throwable)\" because \"this._response\" is null");
                }
            };
            String ping = SoapSlowSenderTest.PING;
            try (Socket s = new Socket()) {
                s.connect(new InetSocketAddress(uri.getHost(), uri.getPort()), 5000);
                s.setSoTimeout(BOUND_MILLIS);
                s.getOutputStream().write(("POST " + uri.getPath() + " HTTP/1.1\r\nHost: 127.0.0.1\r\n"
                        + "Content-Type: text/xml; charset=UTF-8\r\nSOAPAction: \"urn:switchboard:test:conformance/ping\"\r\n"
                        + "Content-Length: " + ping.length() + "\r\n\r\n" + ping).getBytes(StandardCharsets.US_ASCII));

                String got = SoapSlowSenderTest.readUntilClosed(s);

                assertTrue(got.startsWith("HTTP/1.1 200"), "the ping's answer, then the close: " + got);
                assertTrue(checks.get() >= 2, "idle checks: " + checks.get());
            }
        }
    }
}
