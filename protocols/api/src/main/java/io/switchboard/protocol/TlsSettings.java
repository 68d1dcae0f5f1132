package io.switchboard.protocol;

import java.io.IOException;
import java.io.InputStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.GeneralSecurityException;
import java.security.KeyStore;
import java.security.cert.CertificateException;
import java.security.cert.X509Certificate;
import javax.net.ssl.KeyManager;
import javax.net.ssl.SSLContext;
import javax.net.ssl.SSLPeerUnverifiedException;
import javax.net.ssl.SSLSession;
import javax.net.ssl.TrustManager;
import javax.net.ssl.TrustManagerFactory;
import javax.net.ssl.X509ExtendedTrustManager;
import javax.net.ssl.X509TrustManager;

/**
 * TLS for a party's connections, the same for servers and clients: its own key and certificate
 * chain (a PKCS#12 key store), whom it trusts (a PKCS#12 trust store), or both.
 * <ul>
 * <li>A server needs a key. With a trust store too, it requires every caller to present a
 * certificate signed by what it trusts (mutual TLS): a caller without one fails the handshake and
 * never reaches a component.</li>
 * <li>A client trusts the servers its trust store vouches for (without one: what the JVM trusts)
 * and presents its key, if it has one, to servers that ask.</li>
 * </ul>
 * Every protocol with a network form uses it: SOAP ({@code https://}), gRPC ({@code grpcs://}) and
 * tcp ({@code tcps://}). A revocation list ({@link #withRevocationList}) refuses the certificates
 * its authorities have revoked. Each file is read again at the first handshake after it changes:
 * certificates are renewed without a restart.
 *
 * <pre>{@code
 * char[] pw = Files.readString(Path.of("tls-password")).strip().toCharArray();
 * TlsSettings tls = TlsSettings.of(Path.of("me.p12"), Path.of("trust.p12"), pw);
 * ServerSettings server = ServerSettings.defaults().withTls(tls);   // https, grpcs; callers need a trusted key
 * ClientSettings client = ClientSettings.defaults().withTls(tls);   // trusts trust.p12, presents me.p12
 * }</pre>
 *
 * A client without TLS settings still speaks TLS to servers the JVM trusts (its default trust
 * store, or {@code -Djavax.net.ssl.trustStore}), but presents no key.
 */
public final class TlsSettings {
    private final KeyManager[] keyManagers;
    private final TrustManager[] trustManagers;
    private final SSLContext context;
    /** The stores' files (null where not given) and their password, for a revocation list's settings. */
    private final Path keyStore;
    private final Path trustStore;
    private final char[] password;
    /** The revocation list's file, or null. */
    private final Path revocationList;

    private TlsSettings(Path keyStore, Path trustStore, char[] password, Path revocationList) {
        if (keyStore == null && trustStore == null) {
            throw new IllegalArgumentException("TLS settings need a key store, a trust store or both");
        }
        this.keyManagers = keyStore == null ? null : new KeyManager[] {new ReloadingKeyManager(keyStore, password)};
        this.trustManagers = trustStore == null ? null
                : new TrustManager[] {new ReloadingTrustManager(trustStore, password, revocationList)};
        this.keyStore = keyStore;
        this.trustStore = trustStore;
        this.password = password.clone();
        this.revocationList = revocationList;
        try {
            this.context = SSLContext.getInstance("TLS");
            context.init(keyManagers, trustManagers, null);
        } catch (GeneralSecurityException e) {
            throw new IllegalArgumentException("cannot set up TLS: " + e.getMessage(), e);
        }
    }

    /** Own key and certificate chain only: a server that takes any caller, or a client that trusts what the JVM trusts. */
    public static TlsSettings keyStore(Path pkcs12, char[] password) {
        return new TlsSettings(pkcs12, null, password, null);
    }

    /** Trusted certificates only: a client that presents no key. */
    public static TlsSettings trustStore(Path pkcs12, char[] password) {
        return new TlsSettings(null, pkcs12, password, null);
    }

    /**
     * Own key and trusted certificates, both PKCS#12 with the same password; either path may be
     * null (not both). A server with both requires trusted client certificates. Each file is read
     * again when it changes, at the next handshake, so certificates are renewed and authorities
     * added or withdrawn without a restart (connections made before keep what they were made with).
     * A replacement that cannot be read with the password, a key store without a key or a trust
     * store without a certificate is refused, with a warning, and the store before it stays.
     */
    public static TlsSettings of(Path keyStore, Path trustStore, char[] password) {
        return new TlsSettings(keyStore, trustStore, password, null);
    }

    /**
     * These settings, with the certificates a revocation list names refused: a peer whose chain
     * holds one fails the handshake, on every protocol, whichever side checks it (a server its
     * callers under mutual TLS, a client its servers). The file holds one or more CRLs, PEM or DER
     * ({@code keytool -gencrl}, {@code openssl ca -gencrl}), each signed by a certificate of the
     * trust store, and is the only source of revocation: no OCSP, nothing fetched. A chain whose
     * issuer has no list there, or only one past its next update, is refused too. The file is read
     * again when it changes, at the next handshake; a new list that cannot be read or that the
     * trust store did not sign is refused, with a warning, and the one before stays.
     *
     * <pre>{@code
     * TlsSettings tls = TlsSettings.of(key, trust, pw).withRevocationList(Path.of("ca.crl"));
     * }</pre>
     *
     * @throws IllegalArgumentException no trust store, or a list that cannot be read, holds no CRL
     *                                  or holds one the trust store did not sign
     */
    public TlsSettings withRevocationList(Path crls) {
        if (trustStore == null) {
            throw new IllegalArgumentException("a revocation list needs a trust store (--tls-truststore): it names "
                    + "certificates of the authorities that store holds");
        }
        return new TlsSettings(keyStore, trustStore, password, crls);
    }

    /** The revocation list's file, or null without one. */
    public Path revocationList() {
        return revocationList;
    }

    /** Whether there is an own key to present (a server must have one). */
    public boolean hasKey() {
        return keyManagers != null;
    }

    /** Whether a trust store was given: a client trusts only it, a server requires client certificates signed by it. */
    public boolean requiresTrustedPeer() {
        return trustManagers != null;
    }

    /** The key managers, or null without a key store. */
    public KeyManager[] keyManagers() {
        return keyManagers == null ? null : keyManagers.clone();
    }

    /** The trust managers, or null without a trust store (the JVM's defaults then apply). */
    public TrustManager[] trustManagers() {
        return trustManagers == null ? null : trustManagers.clone();
    }

    /** An {@link SSLContext} with both: what JSSE-based stacks (Jetty, HttpClient) take. */
    public SSLContext context() {
        return context;
    }

    /**
     * For a server that requires client certificates, once a handshake has finished: checks the
     * chain its client presented against the trust store and revocation list in force now. A
     * client that resumes an earlier TLS session shows its certificate to no trust manager, so a
     * caller whose authority was withdrawn, or whose certificate was revoked, since its session
     * began could otherwise go on connecting until that session expires (a day, by the JDK's
     * default). Servers whose TLS may resume sessions call it and close a connection it refuses.
     * The outcome is kept on the session, so the connection's first call does not check again.
     *
     * @throws CertificateException the chain is no longer trusted, or the session has none
     */
    public void checkClientStillTrusted(SSLSession session) throws CertificateException {
        check(session, true);
    }

    /**
     * For a server that requires client certificates, on every call: whether the client chain of
     * the call's connection is still trusted by the trust store and revocation list in force. A
     * revocation or a withdrawn authority otherwise reaches only new handshakes, and clients keep
     * their connections. Cheap on every call: a session's chain is checked again only when those
     * files were read again since its last check, and the files are looked at at most every 100 ms.
     * True without a trust store or a session.
     */
    public boolean stillTrusts(SSLSession session) {
        try {
            check(session, false);
            return true;
        } catch (CertificateException e) {
            return false;
        }
    }

    /** What an {@link SSLSession} remembers of its chain's last check: the trust epoch it passed, or its negation. */
    private static final String CHECKED = "io.switchboard.trust-epoch";

    /** The chain of {@code session} checked once per trust epoch ({@code lookNow}: the files looked at first). */
    private void check(SSLSession session, boolean lookNow) throws CertificateException {
        if (session == null || trustManagers == null || !(trustManagers[0] instanceof ReloadingTrustManager reloading)) {
            return;
        }
        long epoch = reloading.epoch(lookNow);
        Object checked = session.getValue(CHECKED);
        if (checked instanceof Long c && c == epoch) {
            return;
        }
        if (checked instanceof Long c && c == -epoch - 1) {
            throw new CertificateException("the client's certificate was refused at this trust store and lists before");
        }
        try {
            verifyClient(session, reloading);
        } catch (CertificateException e) {
            session.putValue(CHECKED, -epoch - 1);
            throw e;
        }
        session.putValue(CHECKED, epoch);
    }

    private static void verifyClient(SSLSession session, X509TrustManager trust) throws CertificateException {
        java.security.cert.Certificate[] presented;
        try {
            presented = session.getPeerCertificates();
        } catch (SSLPeerUnverifiedException e) {
            throw new CertificateException("the client presented no certificate", e);
        }
        X509Certificate[] chain = new X509Certificate[presented.length];
        for (int i = 0; i < presented.length; i++) {
            if (!(presented[i] instanceof X509Certificate c)) {
                throw new CertificateException("the client's certificate is not X.509");
            }
            chain[i] = c;
        }
        // without the engine: the JDK's check with one looks for a handshake under way, and this one is over
        trust.checkClientTrusted(chain, chain[0].getPublicKey().getAlgorithm());
    }

    /** Throws unless this can serve: a server needs a key. */
    public TlsSettings checkServable() {
        if (!hasKey()) {
            throw new IllegalArgumentException("a TLS server needs its key: give a key store (--tls-keystore)");
        }
        return this;
    }

    static KeyStore loadTrustStore(Path pkcs12, char[] password) {
        try {
            KeyStore ks = load(pkcs12, password, "trust store");
            if (ks.size() == 0) {
                throw new IllegalArgumentException("the trust store " + pkcs12 + " holds no certificate");
            }
            return ks;
        } catch (GeneralSecurityException e) {
            throw new IllegalArgumentException("cannot use the trust store " + pkcs12 + ": " + e.getMessage(), e);
        }
    }

    /** The JDK's checks of what {@code trustStore} vouches for. */
    static X509ExtendedTrustManager pkixTrust(KeyStore trustStore) {
        try {
            TrustManagerFactory tmf = TrustManagerFactory.getInstance(TrustManagerFactory.getDefaultAlgorithm());
            tmf.init(trustStore);
            for (TrustManager m : tmf.getTrustManagers()) {
                if (m instanceof X509ExtendedTrustManager x) {
                    return x;
                }
            }
            throw new IllegalStateException("the JDK's trust manager factory made no X.509 trust manager");
        } catch (GeneralSecurityException e) {
            throw new IllegalArgumentException("cannot use the trust store: " + e.getMessage(), e);
        }
    }

    static KeyStore load(Path pkcs12, char[] password, String what) throws GeneralSecurityException {
        KeyStore ks = KeyStore.getInstance("PKCS12");
        try (InputStream in = Files.newInputStream(pkcs12)) {
            ks.load(in, password);
        } catch (IOException e) {
            // a wrong password shows as an IOException too; its message names no secret
            throw new IllegalArgumentException("cannot read the " + what + " " + pkcs12 + ": " + e.getMessage(), e);
        }
        return ks;
    }

    /** Says what is set, never a password or key material. */
    @Override
    public String toString() {
        return "TlsSettings[" + (hasKey() ? "key" : "no key") + ", "
                + (requiresTrustedPeer() ? "trust store" : "JVM trust")
                + (revocationList != null ? ", revocation list " + revocationList : "") + "]";
    }
}
