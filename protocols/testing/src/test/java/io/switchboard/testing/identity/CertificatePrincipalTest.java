package io.switchboard.testing.identity;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;

import io.switchboard.protocol.spi.CertificatePrincipal;
import io.switchboard.testing.TestCertificates;
import java.io.InputStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.KeyStore;
import java.security.cert.Certificate;
import java.security.cert.X509Certificate;
import org.junit.jupiter.api.Test;

class CertificatePrincipalTest {
    private final TestCertificates certs = TestCertificates.get();

    @Test
    void aUriSanWinsOverTheDnsSanAndTheSubject() throws Exception {
        assertEquals(TestCertificates.SPIFFE_ID, CertificatePrincipal.of(leaf(certs.spiffeClientKeyStore())));
    }

    @Test
    void theFirstDnsSanWinsOverTheSubject() throws Exception {
        assertEquals(TestCertificates.DNS_CLIENT, CertificatePrincipal.of(leaf(certs.dnsClientKeyStore())));
    }

    @Test
    void withoutSansTheSubjectIsThePrincipal() throws Exception {
        assertEquals(TestCertificates.CLIENT_SUBJECT, CertificatePrincipal.of(leaf(certs.clientKeyStore())));
    }

    @Test
    void aChainNamesItsLeafAndNoChainNamesNobody() throws Exception {
        Certificate[] chain = chain(certs.dnsClientKeyStore());
        assertEquals(2, chain.length);
        assertEquals(TestCertificates.DNS_CLIENT, CertificatePrincipal.of(chain));
        assertNull(CertificatePrincipal.of(new Certificate[0]));
        assertNull(CertificatePrincipal.of((Certificate[]) null));
        assertNull(CertificatePrincipal.of((javax.net.ssl.SSLSession) null));
    }

    private static X509Certificate leaf(Path store) throws Exception {
        return (X509Certificate) chain(store)[0];
    }

    private static Certificate[] chain(Path store) throws Exception {
        KeyStore ks = KeyStore.getInstance("PKCS12");
        try (InputStream in = Files.newInputStream(store)) {
            ks.load(in, TestCertificates.PASSWORD);
        }
        return ks.getCertificateChain("client");
    }
}
