package io.switchboard.protocol;

import java.io.IOException;
import java.io.InputStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.GeneralSecurityException;
import java.security.KeyStore;
import java.security.cert.CRL;
import java.security.cert.CertPathBuilder;
import java.security.cert.CertStore;
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
final class RevocationTrustManager extends DelegatingTrustManager {
    private final KeyStore trust;
    private final Path file;
    private final WatchedFile<X509ExtendedTrustManager> lists;

    /** @throws IllegalArgumentException the file cannot be read, holds no list, or a list the trust store did not sign */
    RevocationTrustManager(KeyStore trust, Path file) {
        this.trust = trust;
        this.file = file;
        this.lists = new WatchedFile<>("revocation list", file, this::load);
    }

    @Override
    protected X509ExtendedTrustManager checks() {
        return lists.current().value();
    }

    /** The number of the lists' read in force: it changes when the file is read again. */
    long generation() {
        return lists.current().generation();
    }

    private X509ExtendedTrustManager load(Path file) {
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
                    return x;
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
}
