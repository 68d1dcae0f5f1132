package io.switchboard.protocol.grpc;

import io.grpc.Attributes;
import io.grpc.ChannelCredentials;
import io.grpc.Grpc;
import io.grpc.InsecureChannelCredentials;
import io.grpc.InsecureServerCredentials;
import io.grpc.ServerCredentials;
import io.grpc.ServerTransportFilter;
import io.grpc.TlsChannelCredentials;
import io.grpc.TlsServerCredentials;
import io.grpc.netty.shaded.io.netty.handler.ssl.OpenSsl;
import io.grpc.netty.shaded.io.netty.handler.ssl.OpenSslCertificateException;
import io.switchboard.protocol.DelegatingTrustManager;
import io.switchboard.protocol.TlsSettings;
import io.switchboard.protocol.spi.StrangerWarnings;
import java.net.URI;
import java.security.cert.CertPathValidatorException;
import java.security.cert.CertPathValidatorException.BasicReason;
import java.security.cert.CertificateException;
import java.security.cert.CertificateExpiredException;
import java.security.cert.CertificateNotYetValidException;
import java.security.cert.CertificateRevokedException;
import java.security.cert.X509Certificate;
import javax.net.ssl.SSLEngine;
import javax.net.ssl.TrustManager;
import javax.net.ssl.X509ExtendedTrustManager;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * {@link TlsSettings} as grpc-java credentials, and the endpoint form that says TLS: a server with
 * TLS publishes {@code grpcs://HOST:PORT/Component} (plain text: {@code grpc://}), and a client
 * speaks TLS to a {@code grpcs} endpoint and only to it. A server whose settings hold a trust store
 * requires client certificates it trusts ({@link TlsServerCredentials.ClientAuth#REQUIRE}); a
 * connection that closes before its TLS handshake completed (no trusted certificate, plain text)
 * is counted and logged by {@link Refusals}.
 *
 * <p>Internal: public for the registry's watch stream, a gRPC service of its own beside the
 * registry's SOAP listener, which takes the same credentials.
 */
public final class GrpcTls {
    private static final Logger LOG = LoggerFactory.getLogger(GrpcTls.class);
    static final String PLAIN_SCHEME = "grpc";
    static final String TLS_SCHEME = "grpcs";

    private GrpcTls() {
    }

    /** The server's credentials: insecure without TLS settings. */
    public static ServerCredentials server(TlsSettings tls) {
        if (tls == null) {
            return InsecureServerCredentials.create();
        }
        TlsServerCredentials.Builder b = TlsServerCredentials.newBuilder().keyManager(tls.checkServable().keyManagers());
        if (tls.requiresTrustedPeer()) {
            b.trustManager(refusingWithAnAlertClientsRead(tls.trustManagers()))
                    .clientAuth(TlsServerCredentials.ClientAuth.REQUIRE);
        }
        return b.build();
    }

    /** OpenSSL's X509_V_ERR_CERT_UNTRUSTED: BoringSSL answers it with an unknown_ca alert. */
    static final int CERT_UNTRUSTED = 27;

    /**
     * {@code managers}, with a chain they do not trust refused as untrusted. Under BoringSSL
     * (gRPC's TLS when Netty's OpenSSL is there), a check that fails without a reason Netty knows
     * (expired, not yet valid, revoked) is answered with an internal_error alert, which a client
     * cannot tell from a failure after its request went out: it would say its call may have run.
     * Refused as untrusted, the handshake ends with unknown_ca, a refusal clients read as one.
     */
    static TrustManager[] refusingWithAnAlertClientsRead(TrustManager[] managers) {
        if (!OpenSsl.isAvailable() || managers.length != 1 || !(managers[0] instanceof X509ExtendedTrustManager m)) {
            return managers;
        }
        return new TrustManager[] {new DelegatingTrustManager() {
            @Override
            protected X509ExtendedTrustManager checks() {
                return m;
            }

            @Override
            public void checkClientTrusted(X509Certificate[] chain, String authType, SSLEngine engine)
                    throws CertificateException {
                try {
                    m.checkClientTrusted(chain, authType, engine);
                } catch (CertificateException e) {
                    throw withAReasonNettyKnows(e);
                }
            }
        }};
    }

    private static CertificateException withAReasonNettyKnows(CertificateException e) {
        if (e instanceof OpenSslCertificateException || e instanceof CertificateRevokedException
                || e instanceof CertificateExpiredException || e instanceof CertificateNotYetValidException) {
            return e;
        }
        for (Throwable c = e.getCause(); c != null; c = c.getCause() == c ? null : c.getCause()) {
            if (c instanceof CertPathValidatorException v && (v.getReason() == BasicReason.EXPIRED
                    || v.getReason() == BasicReason.NOT_YET_VALID || v.getReason() == BasicReason.REVOKED)) {
                return e;   // Netty names these itself: certificate_expired, certificate_revoked
            }
        }
        OpenSslCertificateException untrusted = new OpenSslCertificateException(e.getMessage(), CERT_UNTRUSTED);
        untrusted.initCause(e);
        return untrusted;
    }

    /**
     * A channel's credentials for an endpoint of {@code scheme}: TLS for {@code grpcs} (the
     * settings' trust, else the JVM's, and the settings' key if any), plain text for {@code grpc}.
     */
    public static ChannelCredentials channel(String scheme, TlsSettings tls) {
        if (!TLS_SCHEME.equals(scheme)) {
            return InsecureChannelCredentials.create();
        }
        TlsChannelCredentials.Builder b = TlsChannelCredentials.newBuilder();
        if (tls != null && tls.hasKey()) {
            b.keyManager(tls.keyManagers());
        }
        if (tls != null && tls.requiresTrustedPeer()) {
            b.trustManager(tls.trustManagers());
        }
        return b.build();
    }

    /** The scheme a server with these settings publishes. */
    static String scheme(TlsSettings tls) {
        return tls == null ? PLAIN_SCHEME : TLS_SCHEME;
    }

    /** Whether {@code uri} is a gRPC endpoint's: either scheme, a host and a port. */
    static boolean isEndpoint(URI uri) {
        return (PLAIN_SCHEME.equals(uri.getScheme()) || TLS_SCHEME.equals(uri.getScheme())) && uri.getHost() != null
                && uri.getPort() > 0;
    }

    /**
     * Counts the connections of a TLS server that ended without ever becoming ready: their
     * handshake failed (gRPC reports such a transport terminated with no attributes).
     */
    static final class Refusals extends ServerTransportFilter {
        final StrangerWarnings refused = new StrangerWarnings("refused at TLS");
        private final boolean tls;

        /** {@code tls}: whether the server speaks TLS; a plain-text one refuses nothing here. */
        Refusals(boolean tls) {
            this.tls = tls;
        }

        @Override
        public Attributes transportReady(Attributes attributes) {
            return attributes;
        }

        @Override
        public void transportTerminated(Attributes attributes) {
            if (tls && (attributes == null || attributes.get(Grpc.TRANSPORT_ATTR_SSL_SESSION) == null)) {
                refused.log(LOG, "gRPC refused a connection at TLS: it closed before a handshake with a trusted certificate");
            }
        }
    }
}
