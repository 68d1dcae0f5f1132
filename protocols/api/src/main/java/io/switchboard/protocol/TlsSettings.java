package io.switchboard.protocol;

import java.io.IOException;
import java.io.InputStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.GeneralSecurityException;
import java.security.KeyStore;
import java.util.Objects;
import javax.net.ssl.KeyManagerFactory;
import javax.net.ssl.SSLContext;
import javax.net.ssl.TrustManagerFactory;

/**
 * TLS for a protocol's connections: an {@link SSLContext} with the key (server side) or the
 * trusted certificates (client side). Today the SOAP protocol uses it (the registry's endpoint and
 * components' SOAP endpoints become {@code https://}); gRPC stays plain.
 *
 * <pre>{@code
 * ServerSettings server = ServerSettings.defaults().withTls(TlsSettings.keyStore(Path.of("registry.p12"), pw));
 * ClientSettings client = ClientSettings.defaults().withTls(TlsSettings.trustStore(Path.of("trust.p12"), pw));
 * }</pre>
 *
 * A client without TLS settings still speaks {@code https} to servers the JVM trusts (its default
 * trust store, or {@code -Djavax.net.ssl.trustStore}).
 */
public record TlsSettings(SSLContext context) {
    public TlsSettings {
        Objects.requireNonNull(context, "context");
    }

    /** A server's key and certificate chain from a PKCS#12 key store (as {@code keytool -genkeypair} makes). */
    public static TlsSettings keyStore(Path pkcs12, char[] password) {
        try {
            KeyManagerFactory kmf = KeyManagerFactory.getInstance(KeyManagerFactory.getDefaultAlgorithm());
            kmf.init(load(pkcs12, password), password);
            SSLContext ctx = SSLContext.getInstance("TLS");
            ctx.init(kmf.getKeyManagers(), null, null);
            return new TlsSettings(ctx);
        } catch (GeneralSecurityException e) {
            throw new IllegalArgumentException("cannot use the key store " + pkcs12 + ": " + e.getMessage(), e);
        }
    }

    /** A client that trusts the certificates in a PKCS#12 store (and only those). */
    public static TlsSettings trustStore(Path pkcs12, char[] password) {
        try {
            TrustManagerFactory tmf = TrustManagerFactory.getInstance(TrustManagerFactory.getDefaultAlgorithm());
            tmf.init(load(pkcs12, password));
            SSLContext ctx = SSLContext.getInstance("TLS");
            ctx.init(null, tmf.getTrustManagers(), null);
            return new TlsSettings(ctx);
        } catch (GeneralSecurityException e) {
            throw new IllegalArgumentException("cannot use the trust store " + pkcs12 + ": " + e.getMessage(), e);
        }
    }

    private static KeyStore load(Path pkcs12, char[] password) throws GeneralSecurityException {
        KeyStore ks = KeyStore.getInstance("PKCS12");
        try (InputStream in = Files.newInputStream(pkcs12)) {
            ks.load(in, password);
        } catch (IOException e) {
            throw new IllegalArgumentException("cannot read the key store " + pkcs12 + ": " + e.getMessage(), e);
        }
        return ks;
    }

    @Override
    public String toString() {
        return "TlsSettings[" + context.getProtocol() + "]";
    }
}
