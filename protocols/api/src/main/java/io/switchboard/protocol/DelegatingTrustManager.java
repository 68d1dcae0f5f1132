package io.switchboard.protocol;

import java.net.Socket;
import java.security.cert.CertificateException;
import java.security.cert.X509Certificate;
import javax.net.ssl.SSLEngine;
import javax.net.ssl.X509ExtendedTrustManager;

/**
 * A trust manager whose checks are another's, picked at each check: the one its files hold now
 * ({@link TlsSettings}), or one a protocol adapts to its TLS stack. A subclass names the delegate
 * and overrides what it changes:
 *
 * <pre>{@code
 * TrustManager logged = new DelegatingTrustManager() {
 *     protected X509ExtendedTrustManager checks() {
 *         return (X509ExtendedTrustManager) tls.trustManagers()[0];
 *     }
 * };
 * }</pre>
 */
public abstract class DelegatingTrustManager extends X509ExtendedTrustManager {
    /** The trust manager that makes this check. */
    protected abstract X509ExtendedTrustManager checks();

    @Override
    public void checkClientTrusted(X509Certificate[] chain, String authType, Socket socket) throws CertificateException {
        checks().checkClientTrusted(chain, authType, socket);
    }

    @Override
    public void checkServerTrusted(X509Certificate[] chain, String authType, Socket socket) throws CertificateException {
        checks().checkServerTrusted(chain, authType, socket);
    }

    @Override
    public void checkClientTrusted(X509Certificate[] chain, String authType, SSLEngine engine) throws CertificateException {
        checks().checkClientTrusted(chain, authType, engine);
    }

    @Override
    public void checkServerTrusted(X509Certificate[] chain, String authType, SSLEngine engine) throws CertificateException {
        checks().checkServerTrusted(chain, authType, engine);
    }

    @Override
    public void checkClientTrusted(X509Certificate[] chain, String authType) throws CertificateException {
        checks().checkClientTrusted(chain, authType);
    }

    @Override
    public void checkServerTrusted(X509Certificate[] chain, String authType) throws CertificateException {
        checks().checkServerTrusted(chain, authType);
    }

    @Override
    public X509Certificate[] getAcceptedIssuers() {
        return checks().getAcceptedIssuers();
    }
}
