package io.switchboard.protocol;

import java.nio.file.Path;
import java.security.KeyStore;
import java.security.cert.X509Certificate;
import javax.net.ssl.X509ExtendedTrustManager;

/**
 * Trusts what a PKCS#12 trust store holds, read again when the file changes, at the next
 * handshake: an authority is added or withdrawn by replacing the file, with no restart. With a
 * revocation list, each read of the store checks the list's signatures again and the list keeps
 * its own reading ({@link RevocationTrustManager}). A replacement that cannot be read, holds no
 * certificate, or did not sign the list is refused, said once, and the store before it stays.
 */
final class ReloadingTrustManager extends DelegatingTrustManager {
    private final WatchedFile<X509ExtendedTrustManager> trust;

    /**
     * @param crls the revocation list, or null
     * @throws IllegalArgumentException the store cannot be read with {@code password}, holds no
     *                                  certificate, or (with {@code crls}) the list is unusable
     */
    ReloadingTrustManager(Path pkcs12, char[] password, Path crls) {
        char[] kept = password.clone();
        this.trust = new WatchedFile<>("trust store", pkcs12, file -> {
            KeyStore store = TlsSettings.loadTrustStore(file, kept);
            return crls == null ? TlsSettings.pkixTrust(store) : new RevocationTrustManager(store, crls);
        });
    }

    @Override
    protected X509ExtendedTrustManager checks() {
        return trust.current().value();
    }

    /**
     * None: a server that asks for a client certificate names no authorities, and a client
     * presents the certificate it has. BoringSSL (gRPC's TLS) takes the names once, when its
     * context is made: names from before a replacement would keep a JDK client of an authority
     * added since from presenting its certificate at all (its key manager picks by the names).
     */
    @Override
    public X509Certificate[] getAcceptedIssuers() {
        return new X509Certificate[0];
    }
}
