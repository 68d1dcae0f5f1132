package io.switchboard.protocol.tcp;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.switchboard.codec.proto.ProtoSchemas;
import io.switchboard.protocol.Endpoint;
import io.switchboard.protocol.PermissionDeniedException;
import io.switchboard.protocol.ServerSettings;
import io.switchboard.testing.CountingSkeleton;
import io.switchboard.testing.TestCertificates;
import io.switchboard.testing.conformance.ConformanceComponent;
import io.switchboard.testing.conformance.ConformanceImpl;
import java.io.IOException;
import java.net.Socket;
import java.nio.file.Path;
import java.util.Arrays;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicInteger;
import javax.net.ssl.SSLContext;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * A client revoked since its TLS session began resumes that session and sends frames by hand:
 * calls, one after another on the connection, and a frame over the limit. Each is answered as
 * unauthenticated and closing, none runs, and the connection ends: after the oversized frame at
 * once (its data is never read), otherwise within the second the server gives it.
 */
class TcpResumedSessionTest {
    private static final String SERVICE = ProtoSchemas.serviceName(ConformanceComponent.DESCRIPTOR.name());

    @Test
    void whatARevokedClientSendsOnItsResumedSessionIsRefusedAndTheConnectionEnds(@TempDir Path dir) throws Exception {
        TestCertificates certs = TestCertificates.get();
        TestCertificates.RevocationFile crl = certs.revocationFile(dir);
        Map<String, AtomicInteger> count = new ConcurrentHashMap<>();
        try (TcpServer server = new TcpServer(ServerSettings.defaults()
                .withTls(certs.serverMutual().withRevocationList(crl.path())), TcpLimits.defaults().withMaxFrameBytes(1024))) {
            Endpoint at = server.export(new CountingSkeleton(ConformanceComponent.skeleton(new ConformanceImpl()),
                    "runs", count, label -> { }));
            SSLContext client = certs.client().context();   // one context: its sessions resume
            try (RawTcp raw = new RawTcp(connect(client, at))) {
                assertEquals(0, raw.call(request("ping", 1), new byte[0]).meta().errorCode(), "trusted, it runs");
            }

            crl.revoke(certs.clientKeyStore());
            try (RawTcp raw = new RawTcp(connect(client, at))) {
                for (long id = 2; id <= 3; id++) {
                    assertRefused(raw.call(request("ping", id), new byte[0]), id);
                }
                assertTrue(raw.closedByServer(), "the connection stayed open");
            }
            try (RawTcp raw = new RawTcp(connect(client, at))) {
                byte[] whole = RawTcp.frame(request("echoDoubles", 4), new byte[4096]);
                raw.write(Arrays.copyOf(whole, whole.length - 4096));   // header and meta: no data ever follows
                assertRefused(raw.read(), 4);
                assertTrue(raw.closedByServer(), "the connection stayed open");
            }
            try (RawTcp raw = new RawTcp(connect(client, at))) {
                assertTrue(raw.closedByServer(), "a connection that sends nothing stayed open");
            }
            assertEquals(1, count.get("runs").get(), "a revoked client's call ran");
        }
    }

    private static void assertRefused(RawTcp.Answer a, long id) {
        assertEquals(id, a.meta().correlationId());
        assertEquals(TcpErrors.AUTH, a.meta().errorCode(), a.meta().errorText());
        assertEquals(PermissionDeniedException.UNAUTHENTICATED, a.meta().userField(TcpErrors.REFUSED));
        assertEquals("1", a.meta().userField(TcpErrors.CLOSING));
        assertTrue(a.meta().errorText().contains("did not run"), a.meta().errorText());
    }

    private static RpcMeta request(String method, long id) {
        return RpcMeta.request(SERVICE, method, null, 0, id, null);
    }

    private static Socket connect(SSLContext client, Endpoint at) throws IOException {
        return client.getSocketFactory().createSocket(at.uri().getHost(), at.uri().getPort());
    }
}
