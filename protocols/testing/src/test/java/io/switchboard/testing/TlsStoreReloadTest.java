package io.switchboard.testing;

import static org.junit.jupiter.api.Assertions.assertDoesNotThrow;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.switchboard.protocol.TlsSettings;
import java.io.InputStream;
import java.io.OutputStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.KeyStore;
import java.security.PrivateKey;
import java.security.Signature;
import java.security.cert.CertificateException;
import java.security.cert.X509Certificate;
import java.util.Arrays;
import javax.net.ssl.SSLServerSocket;
import javax.net.ssl.SSLSocket;
import javax.net.ssl.X509ExtendedKeyManager;
import javax.net.ssl.X509TrustManager;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The key and trust stores of {@link TlsSettings} are read again when their files change, at the
 * next handshake: a renewed certificate, a new authority or a withdrawn one needs no restart. A
 * replacement that cannot be used (garbage, another password, a key store without a key, an empty
 * trust store, a trust store that did not sign the revocation list, a deleted file) leaves what was
 * read before in force. The handshakes of each protocol are {@code AbstractMutualTlsTest}'s.
 */
class TlsStoreReloadTest {
    private final TestCertificates certs = TestCertificates.get();

    @TempDir
    Path dir;

    @Test
    void aReplacedKeyStoreIsPresentedAtTheNextHandshakeAndAHandshakeUnderWayKeepsItsKey() throws Exception {
        Path key = copy(certs.serverKeyStore(), "key.p12");
        X509ExtendedKeyManager keys = keyManager(TlsSettings.keyStore(key, TestCertificates.PASSWORD));
        String before = keys.chooseServerAlias("EC", null, null);
        assertEquals("CN=localhost", subject(keys.getCertificateChain(before)));

        replace(key, certs.clientKeyStore());
        String after = keys.chooseServerAlias("EC", null, null);
        assertEquals(TestCertificates.CLIENT_SUBJECT, subject(keys.getCertificateChain(after)));
        // a handshake that chose its alias before the replacement takes that read's chain and key
        assertEquals("CN=localhost", subject(keys.getCertificateChain(before)));
        assertTrue(pairs(keys.getPrivateKey(before), keys.getCertificateChain(before)[0]));
        assertTrue(pairs(keys.getPrivateKey(after), keys.getCertificateChain(after)[0]));
        assertEquals(null, keys.getPrivateKey("server"), "an alias this manager did not hand out");
    }

    @Test
    void aKeyStoreReplacementThatCannotBeUsedLeavesTheKeyBefore() throws Exception {
        Path key = copy(certs.serverKeyStore(), "key.p12");
        X509ExtendedKeyManager keys = keyManager(TlsSettings.keyStore(key, TestCertificates.PASSWORD));
        Path garbage = Files.write(dir.resolve("garbage.p12"), new byte[] {0x30, 0x03, 1, 2, 3});
        Path otherPassword = storeWithPassword(certs.clientKeyStore(), "another-password".toCharArray());
        for (Path bad : new Path[] {garbage, otherPassword, certs.trustStore()}) {   // the last: no key in it
            replace(key, bad);
            assertEquals("CN=localhost", subject(keys.getCertificateChain(keys.chooseServerAlias("EC", null, null))),
                    "taken in place of the key in force: " + bad.getFileName());
        }
        Files.delete(key);
        assertEquals("CN=localhost", subject(keys.getCertificateChain(keys.chooseServerAlias("EC", null, null))),
                "a deleted key store took the key away");
        Files.copy(certs.clientKeyStore(), key);   // a good one after the bad ones is taken
        assertEquals(TestCertificates.CLIENT_SUBJECT,
                subject(keys.getCertificateChain(keys.chooseServerAlias("EC", null, null))));
    }

    @Test
    void aReplacedTrustStoreAddsAndWithdrawsAuthoritiesAndABadOneLeavesTheStoreBefore() throws Exception {
        Path trustFile = copy(certs.trustStoreOf(dir, certs.rogueKeyStore()), "trust.p12");
        X509TrustManager trust = trustManager(TlsSettings.of(certs.serverKeyStore(), trustFile, TestCertificates.PASSWORD));
        X509Certificate[] client = chain(certs.clientKeyStore());
        assertThrows(CertificateException.class, () -> trust.checkClientTrusted(client, "EC"), "the test CA, not yet trusted");

        replace(trustFile, certs.trustStore());
        assertDoesNotThrow(() -> trust.checkClientTrusted(client, "EC"), "the test CA, trusted since");

        Path garbage = Files.write(dir.resolve("garbage.p12"), new byte[] {0x30, 0x03, 1, 2, 3});
        for (Path bad : new Path[] {garbage, certs.trustStoreOf(dir)}) {   // the last: empty
            replace(trustFile, bad);
            assertDoesNotThrow(() -> trust.checkClientTrusted(client, "EC"), "taken in place of the store in force: " + bad);
        }

        replace(trustFile, certs.trustStoreOf(dir, certs.rogueKeyStore()));
        assertThrows(CertificateException.class, () -> trust.checkClientTrusted(client, "EC"), "the test CA, withdrawn");
        assertDoesNotThrow(() -> trust.checkClientTrusted(chain(certs.rogueKeyStore()), "EC"));
    }

    @Test
    void aRevocationListStaysInForceWhenItsTrustStoreIsReplaced() throws Exception {
        Path trustFile = copy(certs.trustStore(), "trust.p12");
        X509TrustManager trust = trustManager(TlsSettings.of(certs.serverKeyStore(), trustFile, TestCertificates.PASSWORD)
                .withRevocationList(certs.revocationList(dir, certs.clientKeyStore())));
        X509Certificate[] revoked = chain(certs.clientKeyStore());
        X509Certificate[] other = chain(certs.spiffeClientKeyStore());
        assertThrows(CertificateException.class, () -> trust.checkClientTrusted(revoked, "EC"));

        replace(trustFile, certs.trustStore());   // the same authority, read again
        assertThrows(CertificateException.class, () -> trust.checkClientTrusted(revoked, "EC"),
                "the revocation was lifted by reading the trust store again");
        assertDoesNotThrow(() -> trust.checkClientTrusted(other, "EC"));

        // a store that did not sign the list in force is refused: the list could not be checked with it
        replace(trustFile, certs.trustStoreOf(dir, certs.rogueKeyStore()));
        assertDoesNotThrow(() -> trust.checkClientTrusted(other, "EC"), "a store that cannot check the list was taken");
        assertThrows(CertificateException.class, () -> trust.checkClientTrusted(revoked, "EC"));
    }

    @Test
    void aServerSocketPresentsTheRenewedCertificateToNewConnectionsAndTheOldOneServesOn() throws Exception {
        Path key = copy(certs.serverKeyStore(), "key.p12");
        TlsSettings server = TlsSettings.keyStore(key, TestCertificates.PASSWORD);
        TlsSettings client = certs.clientWithoutKey();
        try (SSLServerSocket listener = (SSLServerSocket) server.context().getServerSocketFactory()
                .createServerSocket(0, 8, java.net.InetAddress.getLoopbackAddress())) {
            Thread echo = new Thread(() -> echoEach(listener), "tls-echo");
            echo.setDaemon(true);
            echo.start();
            try (SSLSocket first = connect(client, listener.getLocalPort())) {
                assertEquals("CN=localhost", subject(first.getSession().getPeerCertificates()));
                assertEquals(7, roundTrip(first, 7));

                replace(key, certs.spiffeClientKeyStore());   // another key of the same authority: CN=billing
                // a client of its own: one that resumes the first connection's session is not shown a certificate
                try (SSLSocket second = connect(certs.clientWithoutKey(), listener.getLocalPort())) {
                    assertEquals("CN=billing", subject(second.getSession().getPeerCertificates()));
                    assertEquals(9, roundTrip(second, 9));
                }
                assertEquals(8, roundTrip(first, 8), "the connection made before the renewal serves on");
            }
        }
    }

    private static SSLSocket connect(TlsSettings client, int port) throws Exception {
        SSLSocket s = (SSLSocket) client.context().getSocketFactory()
                .createSocket(java.net.InetAddress.getLoopbackAddress(), port);
        s.setSoTimeout(60_000);
        s.startHandshake();
        return s;
    }

    private static int roundTrip(SSLSocket s, int b) throws Exception {
        s.getOutputStream().write(b);
        s.getOutputStream().flush();
        return s.getInputStream().read();
    }

    /** Accepts connections and echoes each one's bytes back, a thread per connection. */
    private static void echoEach(SSLServerSocket listener) {
        while (!listener.isClosed()) {
            try {
                java.net.Socket s = listener.accept();
                Thread t = new Thread(() -> {
                    try (s; InputStream in = s.getInputStream(); OutputStream out = s.getOutputStream()) {
                        for (int b; (b = in.read()) >= 0; ) {
                            out.write(b);
                            out.flush();
                        }
                    } catch (java.io.IOException e) {
                        // the client went away
                    }
                }, "tls-echo-connection");
                t.setDaemon(true);
                t.start();
            } catch (java.io.IOException e) {
                return;   // closed
            }
        }
    }

    private Path copy(Path from, String name) throws Exception {
        return Files.copy(from, dir.resolve(name));
    }

    private static void replace(Path file, Path with) {
        TestCertificates.replaceFile(file, with);
    }

    private Path storeWithPassword(Path store, char[] password) throws Exception {
        KeyStore ks = KeyStore.getInstance("PKCS12");
        try (InputStream in = Files.newInputStream(store)) {
            ks.load(in, TestCertificates.PASSWORD);
        }
        KeyStore other = KeyStore.getInstance("PKCS12");
        other.load(null, password);
        for (String alias : java.util.Collections.list(ks.aliases())) {
            if (ks.isKeyEntry(alias)) {
                other.setKeyEntry(alias, ks.getKey(alias, TestCertificates.PASSWORD), password, ks.getCertificateChain(alias));
            }
        }
        Path file = dir.resolve("other-password.p12");
        try (OutputStream out = Files.newOutputStream(file)) {
            other.store(out, password);
        }
        return file;
    }

    private static boolean pairs(PrivateKey key, X509Certificate certificate) throws Exception {
        byte[] data = {1, 2, 3};
        Signature sign = Signature.getInstance("SHA256withECDSA");
        sign.initSign(key);
        sign.update(data);
        byte[] signature = sign.sign();
        Signature verify = Signature.getInstance("SHA256withECDSA");
        verify.initVerify(certificate.getPublicKey());
        verify.update(data);
        return verify.verify(signature);
    }

    private static String subject(java.security.cert.Certificate[] chain) {
        return ((X509Certificate) chain[0]).getSubjectX500Principal().getName();
    }

    private static X509ExtendedKeyManager keyManager(TlsSettings tls) {
        assertEquals(1, tls.keyManagers().length, Arrays.toString(tls.keyManagers()));
        return (X509ExtendedKeyManager) tls.keyManagers()[0];
    }

    private static X509TrustManager trustManager(TlsSettings tls) {
        assertEquals(1, tls.trustManagers().length, Arrays.toString(tls.trustManagers()));
        return (X509TrustManager) tls.trustManagers()[0];
    }

    private static X509Certificate[] chain(Path store) {
        return TestCertificates.chainOf(store);
    }
}
