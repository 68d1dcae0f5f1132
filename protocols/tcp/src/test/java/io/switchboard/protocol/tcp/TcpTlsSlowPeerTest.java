package io.switchboard.protocol.tcp;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.switchboard.protocol.CallOptions;
import io.switchboard.protocol.ClientSettings;
import io.switchboard.protocol.Endpoint;
import io.switchboard.protocol.ServerSettings;
import io.switchboard.protocol.TransportException;
import io.switchboard.protocol.spi.ProtocolClient;
import io.switchboard.protocol.spi.ProtocolServer;
import io.switchboard.testing.FaultProxy;
import io.switchboard.testing.TestCertificates;
import io.switchboard.testing.conformance.ConformanceComponent;
import io.switchboard.testing.conformance.ConformanceImpl;
import io.switchboard.testing.conformance.ConformanceStub;
import java.time.Duration;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/** A tcp client over TLS against a server (here, a proxy in front of one) that sends its answers too slowly. */
class TcpTlsSlowPeerTest {
    private final TcpProtocolProvider provider = new TcpProtocolProvider();
    private ProtocolServer server;
    private ProtocolClient client;
    private FaultProxy proxy;
    private ConformanceStub stub;

    @BeforeEach
    void start() {
        TestCertificates certs = TestCertificates.get();
        server = provider.newServer(ServerSettings.defaults().withTls(certs.server()));
        Endpoint at = server.export(ConformanceComponent.skeleton(new ConformanceImpl()));
        proxy = FaultProxy.to(at);
        client = provider.newClient(ClientSettings.defaults().withTls(certs.client()));
        stub = ConformanceComponent.stub(client.connect(ConformanceComponent.DESCRIPTOR, proxy.route(at)));
        stub.ping();   // connected, the handshake done
    }

    @Test
    void theNextCallGoesOnANewConnectionOnceThePeerIsFastAgain() {
        proxy.trickle(FaultProxy.Direction.RESPONSE, Duration.ofMillis(250));
        ConformanceStub hurried = stub.withOptions(CallOptions.DEFAULT.withTimeout(Duration.ofSeconds(1)));
        assertThrows(TransportException.class, hurried::ping);
        proxy.pass();
        stub.ping();
        assertEquals(2, proxy.connections(), "the trickled connection was closed and a new one made");
    }

    @AfterEach
    void stop() {
        client.close();
        proxy.close();
        server.close();
    }

    @Test
    void anAnswerTrickledInOneByteAtATimeFailsTheCallSoonAfterItsDeadline() {
        // every byte well within any read timeout, the whole answer's TLS record some 20 s away
        proxy.trickle(FaultProxy.Direction.RESPONSE, Duration.ofMillis(250));
        ConformanceStub hurried = stub.withOptions(CallOptions.DEFAULT.withTimeout(Duration.ofSeconds(1)));
        long start = System.nanoTime();
        // without the wire's watch the call was answered, some 13 s late
        TransportException e = assertThrows(TransportException.class, hurried::ping);
        long tookMillis = (System.nanoTime() - start) / 1_000_000;
        assertEquals(TransportException.Delivery.MAY_HAVE_RUN, e.delivery(), e.getMessage());
        assertTrue(e.getMessage().contains("a TLS record was still arriving"), e.getMessage());
        // its deadline, the wire's slack past it (Wire.RECORD_SLACK_MILLIS), and room for a slow machine
        assertTrue(tookMillis < 1_000 + Wire.RECORD_SLACK_MILLIS + 3_000,
                "the call failed after " + tookMillis + " ms, its deadline 1 s");
    }
}
