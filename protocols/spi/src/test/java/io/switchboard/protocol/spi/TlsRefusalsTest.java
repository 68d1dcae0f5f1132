package io.switchboard.protocol.spi;

import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.net.SocketException;
import javax.net.ssl.SSLException;
import javax.net.ssl.SSLHandshakeException;
import org.junit.jupiter.api.Test;

/** The failures that say "the server refused the TLS handshake", in the forms both TLS libraries give them. */
class TlsRefusalsTest {
    @Test
    void theJdksHandshakeExceptionAnywhereInTheChain() {
        assertTrue(TlsRefusals.refusedHandshake(new IOException("transport error",
                new SSLHandshakeException("Received fatal alert: bad_certificate"))));
        assertTrue(TlsRefusals.refusedHandshake(new SSLHandshakeException("PKIX path building failed")));
    }

    @Test
    void anAlertOfARefusedHandshakeNamedByEitherLibrary() {
        assertTrue(TlsRefusals.refusedHandshake(new SSLException("Received fatal alert: certificate_required")));
        // BoringSSL through Netty, as a gRPC client sees a server that wants a certificate it has not got
        assertTrue(TlsRefusals.refusedHandshake(new RuntimeException("io.netty.handler.codec.DecoderException",
                new SSLException("error:1000045c:SSL routines:OPENSSL_internal:TLSV1_ALERT_CERTIFICATE_REQUIRED"))));
        assertTrue(TlsRefusals.refusedHandshake(new SSLException("error:10000412:SSL routines:"
                + "OPENSSL_internal:SSLV3_ALERT_BAD_CERTIFICATE")));
    }

    @Test
    void otherFailuresMayHaveRun() {
        assertFalse(TlsRefusals.refusedHandshake(new SocketException("Broken pipe")));
        assertFalse(TlsRefusals.refusedHandshake(new SSLException("Connection reset")));
        assertFalse(TlsRefusals.refusedHandshake(new SSLException("Received fatal alert: record_overflow")));
        assertFalse(TlsRefusals.refusedHandshake(new IOException("bad_certificate, said the body")),
                "an alert's name outside a TLS failure");
        assertFalse(TlsRefusals.refusedHandshake(null));
    }

    @Test
    void aCauseChainThatLoopsEnds() {
        IOException a = new IOException("a");
        IOException b = new IOException("b", a);
        a.initCause(b);
        assertFalse(TlsRefusals.refusedHandshake(a));
    }
}
