package io.switchboard.testing;

import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.InputStream;
import java.nio.file.Files;
import java.security.KeyStore;
import java.security.cert.X509Certificate;
import java.util.Collections;
import org.junit.jupiter.api.Test;

class TestCertificatesTest {
    /** The key usage extension (RFC 5280, 4.2.1.3) and its keyCertSign bit. */
    private static final String KEY_USAGE = "2.5.29.15";
    private static final int KEY_CERT_SIGN = 5;

    @Test
    void theAuthorityMayBeTrustedByStrictVerifiers() throws Exception {
        KeyStore trust = KeyStore.getInstance("PKCS12");
        try (InputStream in = Files.newInputStream(TestCertificates.get().trustStore())) {
            trust.load(in, TestCertificates.PASSWORD);
        }
        for (String alias : Collections.list(trust.aliases())) {
            X509Certificate ca = (X509Certificate) trust.getCertificate(alias);
            assertTrue(ca.getBasicConstraints() >= 0, alias + " is an authority");
            boolean[] usage = ca.getKeyUsage();
            assertNotNull(usage, alias + " has no key usage: OpenSSL's X509_STRICT refuses it as an authority");
            assertTrue(usage[KEY_CERT_SIGN], alias + " may not sign certificates");
            assertTrue(ca.getCriticalExtensionOIDs().contains(KEY_USAGE), alias + ": key usage is not critical");
        }
    }
}
