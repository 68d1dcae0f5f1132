package io.switchboard.protocol;

import java.io.IOException;
import java.io.InputStream;
import java.net.Socket;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.BasicFileAttributes;
import java.nio.file.attribute.FileTime;
import java.security.GeneralSecurityException;
import java.security.KeyStore;
import java.security.cert.CRL;
import java.security.cert.CertPathBuilder;
import java.security.cert.CertStore;
import java.security.cert.CertificateException;
import java.security.cert.CertificateFactory;
import java.security.cert.CollectionCertStoreParameters;
import java.security.cert.PKIXBuilderParameters;
import java.security.cert.PKIXRevocationChecker;
import java.security.cert.X509CRL;
import java.security.cert.X509CertSelector;
import java.security.cert.X509Certificate;
import java.util.ArrayList;
import java.util.Collection;
import java.util.Collections;
import java.util.EnumSet;
import java.util.List;
import javax.net.ssl.CertPathTrustManagerParameters;
import javax.net.ssl.SSLEngine;
import javax.net.ssl.TrustManager;
import javax.net.ssl.TrustManagerFactory;
import javax.net.ssl.X509ExtendedTrustManager;

/**
 * Trusts what a trust store vouches for, less the certificates a revocation list names
 * ({@link TlsSettings#withRevocationList}). The lists come from one file (PEM or DER, one or more
 * CRLs, as {@code keytool -gencrl} or {@code openssl ca -gencrl} write them), each signed by a
 * certificate of the trust store, and are the only source of revocation: no OCSP, no fetching of
 * distribution points, nothing from the network. A peer's chain must be covered: a certificate
 * whose issuer has no list in the file, or only one past its next update, fails the handshake
 * (closed, not open). The file is read again when it changes, at the next handshake, so a fresh
 * list needs no restart; one that cannot be read or is not signed by the trust store is refused,
 * said once, and the list before it stays.
 */
final class RevocationTrustManager extends X509ExtendedTrustManager {
    private static final System.Logger LOG = System.getLogger(RevocationTrustManager.class.getName());

    private final KeyStore trust;
    private final Path file;
    private volatile Loaded current;
    /** The file's state when a reload was refused: the refusal is said once, not at every handshake. */
    private volatile Object refused;

    /** The lists' file as it was read, and the checking its lists make. */
    private record Loaded(FileTime modified, long size, X509ExtendedTrustManager checks) {
    }

    /** @throws IllegalArgumentException the file cannot be read, holds no list, or a list the trust store did not sign */
    RevocationTrustManager(KeyStore trust, Path file) {
        this.trust = trust;
        this.file = file;
        try {
            this.current = load(Files.readAttributes(file, BasicFileAttributes.class));
        } catch (IOException e) {
            throw new IllegalArgumentException("cannot read the revocation list " + file + ": " + e.getMessage(), e);
        }
    }

    private Loaded load(BasicFileAttributes seen) {
        Collection<? extends CRL> crls;
        try (InputStream in = Files.newInputStream(file)) {
            crls = CertificateFactory.getInstance("X.509").generateCRLs(in);
        } catch (IOException | GeneralSecurityException e) {
            throw new IllegalArgumentException("cannot read the revocation list " + file + ": " + e.getMessage(), e);
        }
        if (crls.isEmpty()) {
            throw new IllegalArgumentException("the revocation list " + file + " holds no CRL");
        }
        try {
            List<X509Certificate> authorities = authorities();
            for (CRL crl : crls) {
                checkSigned((X509CRL) crl, authorities);
            }
            PKIXBuilderParameters params = new PKIXBuilderParameters(trust, new X509CertSelector());
            params.addCertStore(CertStore.getInstance("Collection", new CollectionCertStoreParameters(crls)));
            PKIXRevocationChecker checker = (PKIXRevocationChecker) CertPathBuilder.getInstance("PKIX")
                    .getRevocationChecker();
            checker.setOptions(EnumSet.of(PKIXRevocationChecker.Option.PREFER_CRLS,
                    PKIXRevocationChecker.Option.NO_FALLBACK));   // the lists only: no OCSP, no network
            params.addCertPathChecker(checker);
            params.setRevocationEnabled(true);   // by the checker above, in place of the default one
            TrustManagerFactory tmf = TrustManagerFactory.getInstance("PKIX");
            tmf.init(new CertPathTrustManagerParameters(params));
            for (TrustManager m : tmf.getTrustManagers()) {
                if (m instanceof X509ExtendedTrustManager x) {
                    return new Loaded(seen.lastModifiedTime(), seen.size(), x);
                }
            }
            throw new IllegalStateException("the JDK's PKIX trust manager factory made no X.509 trust manager");
        } catch (GeneralSecurityException e) {
            throw new IllegalArgumentException("cannot use the revocation list " + file + ": " + e.getMessage(), e);
        }
    }

    private List<X509Certificate> authorities() throws GeneralSecurityException {
        List<X509Certificate> all = new ArrayList<>();
        for (String alias : Collections.list(trust.aliases())) {
            if (trust.getCertificate(alias) instanceof X509Certificate c) {
                all.add(c);
            }
        }
        return all;
    }

    /** A list counts only if a certificate of the trust store signed it: a forged one is refused, not ignored. */
    private void checkSigned(X509CRL crl, List<X509Certificate> authorities) {
        for (X509Certificate authority : authorities) {
            if (authority.getSubjectX500Principal().equals(crl.getIssuerX500Principal())) {
                try {
                    crl.verify(authority.getPublicKey());
                    return;
                } catch (GeneralSecurityException e) {
                    // another key of the same name may have signed it
                }
            }
        }
        throw new IllegalArgumentException("the revocation list " + file + " holds a list issued by "
                + crl.getIssuerX500Principal() + " that no certificate of the trust store signed");
    }

    /** The checks of the file as it is now: read again when it changed since. */
    private X509ExtendedTrustManager checks() {
        Loaded loaded = current;
        BasicFileAttributes now;
        try {
            now = Files.readAttributes(file, BasicFileAttributes.class);
        } catch (IOException e) {
            refuse(e.toString(), "cannot be read: " + e.getMessage());
            return loaded.checks();
        }
        if (now.lastModifiedTime().equals(loaded.modified()) && now.size() == loaded.size()) {
            return loaded.checks();
        }
        synchronized (this) {
            loaded = current;
            if (now.lastModifiedTime().equals(loaded.modified()) && now.size() == loaded.size()) {
                return loaded.checks();
            }
            try {
                current = loaded = load(now);
                LOG.log(System.Logger.Level.INFO, "read the revocation list " + file + " again");
            } catch (IllegalArgumentException e) {
                refuse(List.of(now.lastModifiedTime(), now.size()), "was refused: " + e.getMessage());
            }
            return loaded.checks();
        }
    }

    private void refuse(Object state, String why) {
        if (!state.equals(refused)) {
            refused = state;
            LOG.log(System.Logger.Level.WARNING, "the revocation list " + file + " " + why
                    + "; the list read before it stays in force");
        }
    }

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
