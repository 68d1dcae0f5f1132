package io.switchboard.protocol.spi;

import java.util.List;
import java.util.Locale;
import javax.net.ssl.SSLException;
import javax.net.ssl.SSLHandshakeException;

/**
 * Whether a client's failure is a failed TLS handshake (the server refused its certificate, or
 * required one it did not send, or the client refused the server's): then no request reached an
 * operation, whatever the client had written. Under TLS 1.3 a client sends its request right
 * after its own half of the handshake and learns only when it reads that the server refused its
 * certificate; the server never reads a request on a connection whose handshake it refused.
 * Transports report such a call as not delivered.
 *
 * <p>The JDK's TLS reports a failed handshake as an {@link SSLHandshakeException}, or, once it
 * counted its half done, as an {@link SSLException} naming the alert it received ("Received fatal
 * alert: bad_certificate"); gRPC's BoringSSL names the alert in its error
 * ("TLSV1_ALERT_CERTIFICATE_REQUIRED"). A client that saw only its connection break (a broken pipe
 * while it wrote) cannot tell and still says the call may have run.
 *
 * <pre>{@code
 * Delivery d = TlsRefusals.refusedHandshake(e) ? Delivery.NOT_DELIVERED : Delivery.MAY_HAVE_RUN;
 * }</pre>
 */
public final class TlsRefusals {
    /** Causes looked through at most: a chain longer than this is not a handshake's. */
    private static final int MAX_DEPTH = 16;
    /** The alerts of a refused handshake (RFC 8446 section 6.2), as both TLS libraries name them, in lower case. */
    private static final List<String> HANDSHAKE_ALERTS = List.of("bad_certificate", "certificate_required",
            "unknown_ca", "certificate_unknown", "certificate_revoked", "certificate_expired",
            "unsupported_certificate", "handshake_failure", "access_denied");

    private TlsRefusals() {
    }

    /** True if {@code failure} or one of its causes is a failed TLS handshake. */
    public static boolean refusedHandshake(Throwable failure) {
        Throwable t = failure;
        for (int depth = 0; t != null && depth < MAX_DEPTH; depth++) {
            if (t instanceof SSLHandshakeException || namesHandshakeAlert(t)) {
                return true;
            }
            t = t.getCause() == t ? null : t.getCause();
        }
        return false;
    }

    /** An SSL failure (the JDK's, or BoringSSL's through Netty) whose message names a handshake alert. */
    private static boolean namesHandshakeAlert(Throwable t) {
        if (!(t instanceof SSLException) || t.getMessage() == null) {
            return false;
        }
        String m = t.getMessage().toLowerCase(Locale.ROOT);
        if (!m.contains("alert")) {
            return false;
        }
        for (String alert : HANDSHAKE_ALERTS) {
            if (m.contains(alert)) {
                return true;
            }
        }
        return false;
    }
}
