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
    /** How often {@link #epoch} looks at the files: a call's check costs no file look of its own. */
    static final long EPOCH_LOOK_NANOS = 100_000_000L;

    private final WatchedFile<X509ExtendedTrustManager> trust;
    private volatile long epoch;
    private volatile long epochLookedNanos = System.nanoTime() - EPOCH_LOOK_NANOS;

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
     * What changes whenever the trust in force does (the store or its revocation list read
     * again), looking at the files at most every {@link #EPOCH_LOOK_NANOS} unless {@code lookNow}:
     * callers that checked a chain at one epoch need not check it again until the next.
     */
    long epoch(boolean lookNow) {
        long now = System.nanoTime();
        if (lookNow || now - epochLookedNanos >= EPOCH_LOOK_NANOS) {
            epochLookedNanos = now;
            WatchedFile.Read<X509ExtendedTrustManager> read = trust.current();
            long lists = read.value() instanceof RevocationTrustManager r ? r.generation() : 0;
            epoch = (read.generation() << 32) | lists;
        }
        return epoch;
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
