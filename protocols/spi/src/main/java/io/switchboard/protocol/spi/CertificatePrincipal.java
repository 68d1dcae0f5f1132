package io.switchboard.protocol.spi;

import java.security.cert.Certificate;
import java.security.cert.CertificateParsingException;
import java.security.cert.X509Certificate;
import java.util.Collection;
import java.util.List;
import javax.net.ssl.SSLPeerUnverifiedException;
import javax.net.ssl.SSLSession;

/**
 * The principal a client certificate proves, the same on every protocol: its URI SAN (a SPIFFE ID
 * such as {@code spiffe://example.org/team-a/billing}) if it has one, else its first DNS SAN, else
 * its subject DN. SPI.
 *
 * <pre>{@code
 * String principal = CertificatePrincipal.of(sslSession);   // null: no client certificate
 * }</pre>
 */
public final class CertificatePrincipal {
    /** The SAN type numbers of RFC 5280 as {@link X509Certificate#getSubjectAlternativeNames()} gives them. */
    private static final int DNS = 2;
    private static final int URI = 6;

    private CertificatePrincipal() {
    }

    /** The principal of {@code certificate}. */
    public static String of(X509Certificate certificate) {
        String uri = firstSan(certificate, URI);
        if (uri != null) {
            return uri;
        }
        String dns = firstSan(certificate, DNS);
        return dns != null ? dns : certificate.getSubjectX500Principal().getName();
    }

    /** The principal of the certificate the peer of {@code session} presented; null without one (or without a session). */
    public static String of(SSLSession session) {
        if (session == null) {
            return null;
        }
        try {
            return of(session.getPeerCertificates());
        } catch (SSLPeerUnverifiedException e) {
            return null;   // TLS without a client certificate
        }
    }

    /** The principal of the first (the peer's own) certificate of {@code chain}; null for an empty or missing chain. */
    public static String of(Certificate[] chain) {
        if (chain == null || chain.length == 0 || !(chain[0] instanceof X509Certificate leaf)) {
            return null;
        }
        return of(leaf);
    }

    private static String firstSan(X509Certificate certificate, int type) {
        Collection<List<?>> names;
        try {
            names = certificate.getSubjectAlternativeNames();
        } catch (CertificateParsingException e) {
            return null;   // an unreadable SAN extension proves no name: the subject stands
        }
        if (names == null) {
            return null;
        }
        for (List<?> name : names) {
            if (name.size() >= 2 && name.get(0) instanceof Integer t && t == type && name.get(1) instanceof String s
                    && !s.isEmpty()) {
                return s;
            }
        }
        return null;
    }
}
