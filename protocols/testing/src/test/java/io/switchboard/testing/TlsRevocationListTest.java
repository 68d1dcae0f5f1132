package io.switchboard.testing;

import static org.junit.jupiter.api.Assertions.assertDoesNotThrow;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.switchboard.protocol.TlsSettings;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.cert.CertificateException;
import java.security.cert.X509Certificate;
import java.util.Arrays;
import javax.net.ssl.X509TrustManager;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * {@link TlsSettings#withRevocationList}: what a list revokes is refused and the rest of its
 * authority's certificates are trusted; a list the trust store did not sign, a file that is no
 * list, and a list without a trust store are refused when the settings are made; a changed file is
 * read again at the next check, and a bad replacement leaves the list before it in force. The
 * handshakes on each protocol are {@code AbstractMutualTlsTest}'s.
 */
class TlsRevocationListTest {
    private final TestCertificates certs = TestCertificates.get();

    @TempDir
    Path dir;

    @Test
    void theRevokedCertificateIsRefusedAndTheAuthoritysOthersAreTrusted() throws Exception {
        X509TrustManager trust = trustManager(certs.serverMutual()
                .withRevocationList(certs.revocationList(dir, certs.clientKeyStore())));
        CertificateException e = assertThrows(CertificateException.class,
                () -> trust.checkClientTrusted(chain(certs.clientKeyStore()), "EC"));
        assertTrue(String.valueOf(e.getMessage()).toLowerCase(java.util.Locale.ROOT).contains("revoked"), e.getMessage());
        assertDoesNotThrow(() -> trust.checkClientTrusted(chain(certs.spiffeClientKeyStore()), "EC"));
        assertThrows(CertificateException.class, () -> trust.checkClientTrusted(chain(certs.rogueKeyStore()), "EC"),
                "a certificate of no trusted authority");
    }

    @Test
    void aListTheTrustStoreDidNotSignIsRefused() {
        Path forged = certs.rogueRevocationList(dir, certs.clientKeyStore());
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
                () -> certs.serverMutual().withRevocationList(forged));
        assertTrue(e.getMessage().contains("no certificate of the trust store signed"), e.getMessage());
    }

    @Test
    void aFileThatHoldsNoListAndAMissingFileAreRefused() throws Exception {
        Path garbage = Files.writeString(dir.resolve("garbage.crl"), "-----BEGIN X509 CRL-----\nnot base64\n");
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
                () -> certs.serverMutual().withRevocationList(garbage));
        assertTrue(e.getMessage().startsWith("cannot read the revocation list " + garbage), e.getMessage());
        Path empty = Files.writeString(dir.resolve("empty.crl"), "");
        e = assertThrows(IllegalArgumentException.class, () -> certs.serverMutual().withRevocationList(empty));
        assertTrue(e.getMessage().contains("holds no CRL"), e.getMessage());
        e = assertThrows(IllegalArgumentException.class,
                () -> certs.serverMutual().withRevocationList(dir.resolve("missing.crl")));
        assertTrue(e.getMessage().contains("missing.crl"), e.getMessage());
    }

    @Test
    void aListNeedsATrustStore() {
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
                () -> certs.server().withRevocationList(certs.revocationList(dir)));
        assertTrue(e.getMessage().contains("needs a trust store"), e.getMessage());
    }

    @Test
    void aChangedListIsReadAgainAndABadReplacementLeavesTheOneBefore() throws Exception {
        Path list = dir.resolve("in-force.crl");
        Files.copy(certs.revocationList(dir), list);
        X509TrustManager trust = trustManager(certs.serverMutual().withRevocationList(list));
        X509Certificate[] client = chain(certs.clientKeyStore());
        trust.checkClientTrusted(client, "EC");

        replace(list, certs.revocationList(dir, certs.clientKeyStore()));
        assertThrows(CertificateException.class, () -> trust.checkClientTrusted(client, "EC"), "revoked since");

        replace(list, certs.rogueRevocationList(dir));   // a forged list that revokes nothing
        assertThrows(CertificateException.class, () -> trust.checkClientTrusted(client, "EC"),
                "the forged list was taken in place of the one in force");
        Files.delete(list);
        assertThrows(CertificateException.class, () -> trust.checkClientTrusted(client, "EC"),
                "a removed file lifted the revocation");
    }

    private static void replace(Path list, Path with) {
        TestCertificates.replaceFile(list, with);
    }

    private static X509TrustManager trustManager(TlsSettings tls) {
        assertEquals(1, tls.trustManagers().length, Arrays.toString(tls.trustManagers()));
        return (X509TrustManager) tls.trustManagers()[0];
    }

    private static X509Certificate[] chain(Path store) {
        return TestCertificates.chainOf(store);
    }
}
