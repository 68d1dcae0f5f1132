package io.switchboard.testing;

import io.switchboard.protocol.TlsSettings;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.GeneralSecurityException;
import java.security.KeyStore;
import java.util.ArrayList;
import java.util.Base64;
import java.util.List;
import java.util.concurrent.TimeUnit;

/**
 * Keys and certificates for TLS tests, made by the JDK's {@code keytool}: a test certificate authority, a server key ({@code CN=localhost}, valid for
 * {@code 127.0.0.1}, {@code localhost} and {@link #NAMESPACE_SERVER_ADDRESS}) and client keys (a subject only, a URI SAN, a DNS SAN),
 * all signed by it, a trust store
 * holding the authority, and a rogue key the authority never signed. Every store is PKCS#12 with
 * {@link #PASSWORD}, which is for tests only. In a checkout they are made once a day in
 * {@code target/test-certificates} and shared by every test JVM of the build (24 keytool JVMs cost
 * seconds of CPU, and a build starts dozens of test JVMs); so a test reads these files and never
 * writes them. Outside a checkout each JVM makes its own in a temporary directory.
 *
 * <pre>{@code
 * TestCertificates certs = TestCertificates.get();
 * ServerSettings server = ServerSettings.defaults().withTls(certs.serverMutual());   // requires trusted clients
 * ClientSettings client = ClientSettings.defaults().withTls(certs.client());        // trusts the CA, presents its key
 * }</pre>
 */
public final class TestCertificates {
    /** The password of every store made here; for tests only. */
    public static final char[] PASSWORD = "test-only-password".toCharArray();
    /**
     * The address of the first host {@link NetworkNamespaces} makes (its addresses exist only inside
     * its namespaces), which the server's certificate names too, so that a server on that host
     * serves TLS to clients on the others.
     */
    public static final String NAMESPACE_SERVER_ADDRESS = NetworkNamespaces.hostAddress(0);
    /** The subject of {@link #client()}'s certificate, which has no SAN: its principal. */
    public static final String CLIENT_SUBJECT = "CN=switchboard-test-client";
    /** The URI SAN (a SPIFFE ID) of {@link #spiffeClient()}'s certificate: its principal. */
    public static final String SPIFFE_ID = "spiffe://switchboard.test/team-a/billing";
    /** The DNS SAN {@link #spiffeClient()}'s certificate has besides its URI SAN (not its principal). */
    public static final String URI_CLIENT_DNS = "billing.team-a.test";
    /** The DNS SAN of {@link #dnsClient()}'s certificate: its principal. */
    public static final String DNS_CLIENT = "reports.team-b.test";
    private static TestCertificates instance;

    private final Path dir;

    private TestCertificates(Path dir) {
        this.dir = dir;
    }

    /**
     * The certificates, made on first use (a few seconds of keytool), once a day for every test
     * JVM of this checkout when there is one (see the class comment), else once for this JVM.
     */
    public static synchronized TestCertificates get() {
        if (instance == null) {
            try {
                Path shared = sharedRoot();
                instance = new TestCertificates(shared != null ? SharedStores.in(shared, rounds(), TestCertificates::make)
                        : ownStores());
            } catch (IOException e) {
                throw new UncheckedIOException(e);
            }
        }
        return instance;
    }

    /** {@code <repository>/target/test-certificates}, or null when this JVM runs outside a checkout. */
    private static Path sharedRoot() {
        for (Path p = Path.of("").toAbsolutePath(); p != null; p = p.getParent()) {
            if (Files.isRegularFile(p.resolve("scripts/test-prerequisites.sh"))) {
                return p.resolve("target").resolve("test-certificates");
            }
        }
        return null;
    }

    private static Path ownStores() throws IOException {
        Path dir = Files.createTempDirectory("switchboard-tls-");
        make(dir, rounds());
        Runtime.getRuntime().addShutdownHook(new Thread(() -> deleteQuietly(dir)));
        return dir;
    }

    /** The server's key store (key + chain up to the test CA). */
    public Path serverKeyStore() {
        return dir.resolve("server.p12");
    }

    /** The trusted client's key store (key + chain up to the test CA). */
    public Path clientKeyStore() {
        return dir.resolve("client.p12");
    }

    /** A trusted client key whose certificate names {@link #SPIFFE_ID} (URI SAN) and {@link #URI_CLIENT_DNS} (DNS SAN). */
    public Path spiffeClientKeyStore() {
        return dir.resolve("client-uri.p12");
    }

    /** A trusted client key whose certificate names {@link #DNS_CLIENT} (its only SAN). */
    public Path dnsClientKeyStore() {
        return dir.resolve("client-dns.p12");
    }

    /** A self-signed key no trust store here holds. */
    public Path rogueKeyStore() {
        return dir.resolve("rogue.p12");
    }

    /** The trust store: the test CA only. */
    public Path trustStore() {
        return dir.resolve("trust.p12");
    }

    /** A file holding {@link #PASSWORD}, as {@code --tls-password-file} takes it. */
    public Path passwordFile() {
        return dir.resolve("password");
    }

    /**
     * The trusted client's key and certificate and the test CA's certificate as PEM files, for
     * programs that do not read PKCS#12 ({@code curl --cert --key --cacert}, Python's
     * {@code requests}); written on first use beside the stores, the key unencrypted (tests only).
     */
    public Pem clientPem() {
        return pemFiles(dir);
    }

    private static Pem pemFiles(Path dir) {
        return new Pem(dir.resolve("ca.pem"), dir.resolve("client.pem"), dir.resolve("client-key.pem"));
    }

    private static void writePem(Path dir) throws IOException {
        Pem pem = pemFiles(dir);
        try {
            KeyStore client = KeyStore.getInstance("PKCS12");
            try (var in = Files.newInputStream(dir.resolve("client.p12"))) {
                client.load(in, PASSWORD);
            }
            KeyStore trust = KeyStore.getInstance("PKCS12");
            try (var in = Files.newInputStream(dir.resolve("trust.p12"))) {
                trust.load(in, PASSWORD);
            }
            Files.writeString(pem.ca(), pem("CERTIFICATE", trust.getCertificate("ca").getEncoded()));
            Files.writeString(pem.certificate(), pem("CERTIFICATE", client.getCertificate("client").getEncoded()));
            Files.writeString(pem.key(), pem("PRIVATE KEY", client.getKey("client", PASSWORD).getEncoded()));
        } catch (GeneralSecurityException e) {
            throw new IllegalStateException("cannot read the test stores", e);
        }
    }

    /** PEM files: the CA's certificate, the client's certificate and its PKCS#8 key. */
    public record Pem(Path ca, Path certificate, Path key) {
    }

    private static String pem(String type, byte[] der) {
        return "-----BEGIN " + type + "-----\n"
                + Base64.getMimeEncoder(64, "\n".getBytes(StandardCharsets.US_ASCII)).encodeToString(der)
                + "\n-----END " + type + "-----\n";
    }

    /**
     * A revocation list (PEM) the test CA signed that revokes the certificates of the given key
     * stores of this class (none: a list that revokes nothing), written by {@code keytool -gencrl}
     * into a new file of {@code dir}; it is due for its next update in 90 days.
     */
    public Path revocationList(Path dir, Path... revoked) {
        return crl(dir, dir.resolve("ca-" + System.nanoTime() + ".crl"), "ca", this.dir.resolve("ca.p12"), revoked);
    }

    /**
     * A revocation list file in {@code dir} to give a server ({@code withRevocationList(file.path())}),
     * revoking nothing at first; {@link RevocationFile#revoke} replaces it whole, as a renewal would,
     * with a list revoking the given key stores' certificates.
     *
     * <pre>{@code
     * RevocationFile crl = certs.revocationFile(dir);
     * ... server with certs.serverMutual().withRevocationList(crl.path()) ...
     * crl.revoke(certs.clientKeyStore());
     * }</pre>
     */
    public RevocationFile revocationFile(Path dir) {
        RevocationFile file = new RevocationFile(dir);
        file.revoke();
        return file;
    }

    /** See {@link #revocationFile}. */
    public final class RevocationFile {
        private final Path dir;
        private final Path path;

        private RevocationFile(Path dir) {
            this.dir = dir;
            this.path = dir.resolve("in-force.crl");
        }

        public Path path() {
            return path;
        }

        /** Replaces the file with a list the test CA signed revoking these stores' certificates (none: nothing). */
        public void revoke(Path... stores) {
            replaceFile(path, revocationList(dir, stores));
        }
    }

    /** A revocation list signed by the rogue key, which no trust store here holds, revoking the given stores' certificates. */
    public Path rogueRevocationList(Path dir, Path... revoked) {
        return crl(dir, dir.resolve("rogue-" + System.nanoTime() + ".crl"), "rogue", rogueKeyStore(), revoked);
    }

    private static Path crl(Path dir, Path file, String signer, Path signerStore, Path... revoked) {
        List<String> args = new ArrayList<>(List.of("-gencrl", "-rfc", "-alias", signer, "-keystore",
                signerStore.toString(), "-storetype", "PKCS12", "-storepass", new String(PASSWORD), "-file",
                file.toString()));
        try {
            for (Path store : revoked) {
                KeyStore ks = load(store);
                for (String alias : java.util.Collections.list(ks.aliases())) {
                    if (ks.isKeyEntry(alias)) {
                        java.security.cert.X509Certificate c = (java.security.cert.X509Certificate) ks.getCertificate(alias);
                        args.addAll(List.of("-id", c.getSerialNumber() + ":1"));   // 1: key compromise
                    }
                }
            }
            round(dir, List.of(args));
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        } catch (GeneralSecurityException e) {
            throw new IllegalStateException("cannot read the test stores", e);
        }
        return file;
    }

    /**
     * A trust store, in a new file of {@code dir}, that holds the certificates of the given key
     * stores' keys alone (none: an empty store): to trust the rogue key, or one key of the authority.
     */
    public Path trustStoreOf(Path dir, Path... keyStores) {
        Path file = dir.resolve("trust-" + System.nanoTime() + ".p12");
        try {
            KeyStore trust = KeyStore.getInstance("PKCS12");
            trust.load(null, PASSWORD);
            for (Path store : keyStores) {
                KeyStore ks = load(store);
                for (String alias : java.util.Collections.list(ks.aliases())) {
                    if (ks.isKeyEntry(alias)) {
                        trust.setCertificateEntry(store.getFileName() + "-" + alias, ks.getCertificate(alias));
                    }
                }
            }
            save(trust, file);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        } catch (GeneralSecurityException e) {
            throw new IllegalStateException("cannot read the test stores", e);
        }
        return file;
    }

    /** The certificate chain of the key in {@code keyStore} (a store of this class). */
    public static java.security.cert.X509Certificate[] chainOf(Path keyStore) {
        try {
            KeyStore ks = load(keyStore);
            for (String alias : java.util.Collections.list(ks.aliases())) {
                if (ks.isKeyEntry(alias)) {
                    return java.util.Arrays.stream(ks.getCertificateChain(alias))
                            .map(c -> (java.security.cert.X509Certificate) c)
                            .toArray(java.security.cert.X509Certificate[]::new);
                }
            }
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        } catch (GeneralSecurityException e) {
            throw new IllegalStateException("cannot read " + keyStore, e);
        }
        throw new IllegalStateException("no key in " + keyStore);
    }

    /**
     * Puts {@code with}'s bytes in {@code file}, its modification time at least a second on, as a
     * renewal would: a reader that looks at the file's time sees the change however coarse the
     * file system's clock.
     */
    public static void replaceFile(Path file, Path with) {
        try {
            long before = Files.exists(file) ? Files.getLastModifiedTime(file).toMillis() : 0;
            Files.copy(with, file, java.nio.file.StandardCopyOption.REPLACE_EXISTING);
            Files.setLastModifiedTime(file, java.nio.file.attribute.FileTime.fromMillis(
                    Math.max(before + 1000, System.currentTimeMillis())));
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    /** A server that takes any caller (TLS, no client certificates). */
    public TlsSettings server() {
        return TlsSettings.keyStore(serverKeyStore(), PASSWORD);
    }

    /** A server that requires client certificates signed by the test CA (mutual TLS). */
    public TlsSettings serverMutual() {
        return TlsSettings.of(serverKeyStore(), trustStore(), PASSWORD);
    }

    /** A trusted client: trusts the test CA and presents a key it signed. */
    public TlsSettings client() {
        return TlsSettings.of(clientKeyStore(), trustStore(), PASSWORD);
    }

    /** A trusted client whose certificate has a URI SAN ({@link #SPIFFE_ID}) and a DNS SAN. */
    public TlsSettings spiffeClient() {
        return TlsSettings.of(spiffeClientKeyStore(), trustStore(), PASSWORD);
    }

    /** A trusted client whose certificate has a DNS SAN ({@link #DNS_CLIENT}) only. */
    public TlsSettings dnsClient() {
        return TlsSettings.of(dnsClientKeyStore(), trustStore(), PASSWORD);
    }

    /** A client that trusts the server but has no key to present. */
    public TlsSettings clientWithoutKey() {
        return TlsSettings.trustStore(trustStore(), PASSWORD);
    }

    /** A client that trusts the server but presents a key nobody trusts. */
    public TlsSettings rogueClient() {
        return TlsSettings.of(rogueKeyStore(), trustStore(), PASSWORD);
    }

    /**
     * The keytool runs in two rounds, the runs of a round in parallel (each is a JVM start, the most
     * of this class's cost): the authority and the rogue key, then each signed key made in a copy of
     * the authority's store by {@code -genkeypair -signer}. Names are relative to the directory; the
     * recipe's digest names the shared directory, so a changed recipe makes new stores.
     */
    private static List<List<List<String>>> rounds() {
        List<String> signed = List.of("-signer", "ca", "-signerkeypass", new String(PASSWORD));
        return List.of(
                // key usage on the authority: strict verifiers (OpenSSL's X509_STRICT, Python 3.13's
                // default context) refuse a CA certificate without it
                List.of(genkeypair("ca", "CN=Switchboard test CA", "ca.p12", "-ext", "bc:c", "-ext",
                                "KU:c=keyCertSign,cRLSign"),
                        genkeypair("rogue", "CN=rogue", "rogue.p12")),
                List.of(concat(genkeypair("server", "CN=localhost", "server.p12", "-ext",
                                "SAN=ip:127.0.0.1,ip:" + NAMESPACE_SERVER_ADDRESS + ",dns:localhost"), signed),
                        concat(genkeypair("client", CLIENT_SUBJECT, "client.p12"), signed),
                        concat(genkeypair("client", "CN=billing", "client-uri.p12", "-ext",
                                "SAN=uri:" + SPIFFE_ID + ",dns:" + URI_CLIENT_DNS), signed),
                        concat(genkeypair("client", "CN=reports", "client-dns.p12", "-ext", "SAN=dns:" + DNS_CLIENT),
                                signed)));
    }

    /**
     * Runs the rounds in {@code dir}, each signed key in a copy of the authority's store; then what
     * needs no new key or signature (the trust store, the authority's key replaced by its certificate
     * in each copy) with the JDK's {@link KeyStore}; then the password and PEM files: everything,
     * before anyone reads.
     */
    private static void make(Path dir, List<List<List<String>>> rounds) throws IOException {
        Path ca = dir.resolve("ca.p12");
        List<String> copies = List.of("server.p12", "client.p12", "client-uri.p12", "client-dns.p12");
        round(dir, rounds.get(0));
        for (String copy : copies) {
            Files.copy(ca, dir.resolve(copy));
        }
        round(dir, rounds.get(1));
        try {
            java.security.cert.Certificate authority = load(ca).getCertificate("ca");
            for (String copy : copies) {
                // the signed key keeps its chain up to the authority; the authority's own key leaves the store
                KeyStore store = load(dir.resolve(copy));
                store.deleteEntry("ca");
                store.setCertificateEntry("ca", authority);
                save(store, dir.resolve(copy));
            }
            KeyStore trust = KeyStore.getInstance("PKCS12");
            trust.load(null, PASSWORD);
            trust.setCertificateEntry("ca", authority);
            save(trust, dir.resolve("trust.p12"));
        } catch (GeneralSecurityException e) {
            throw new IOException("cannot finish the test stores", e);
        }
        Files.writeString(dir.resolve("password"), new String(PASSWORD) + "\n");
        writePem(dir);
    }

    private static KeyStore load(Path file) throws IOException, GeneralSecurityException {
        KeyStore store = KeyStore.getInstance("PKCS12");
        try (var in = Files.newInputStream(file)) {
            store.load(in, PASSWORD);
        }
        return store;
    }

    private static void save(KeyStore store, Path file) throws IOException, GeneralSecurityException {
        try (var out = Files.newOutputStream(file)) {
            store.store(out, PASSWORD);
        }
    }

    private static List<String> genkeypair(String alias, String dname, String keyStore, String... more) {
        List<String> args = new ArrayList<>(List.of("-genkeypair", "-alias", alias, "-keyalg", "EC", "-groupname",
                "secp256r1", "-dname", dname, "-validity", "2", "-storetype", "PKCS12", "-keystore", keyStore,
                "-storepass", new String(PASSWORD)));
        args.addAll(List.of(more));
        return args;
    }

    private static List<String> concat(List<String> a, List<String> b) {
        List<String> all = new ArrayList<>(a);
        all.addAll(b);
        return all;
    }

    private static void round(Path dir, List<List<String>> runs) throws IOException {
        List<Process> started = new ArrayList<>();
        for (List<String> args : runs) {
            List<String> cmd = new ArrayList<>(List.of(
                    Path.of(System.getProperty("java.home"), "bin", "keytool").toString(),
                    // a short-lived tool: start fast
                    "-J-XX:TieredStopAtLevel=1", "-J-XX:+UseSerialGC", "-J-Xshare:auto"));
            cmd.addAll(args);
            started.add(new ProcessBuilder(cmd).directory(dir.toFile()).redirectErrorStream(true).start());
        }
        for (int i = 0; i < runs.size(); i++) {
            Process p = started.get(i);
            try {
                String out = new String(p.getInputStream().readAllBytes());
                if (!p.waitFor(120, TimeUnit.SECONDS) || p.exitValue() != 0) {
                    p.destroyForcibly();
                    throw new IOException("keytool " + runs.get(i).get(0) + " failed: " + out);
                }
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                throw new IOException("interrupted while keytool ran", e);
            }
        }
    }

    private static void deleteQuietly(Path dir) {
        try (var files = Files.list(dir)) {
            files.forEach(f -> f.toFile().delete());
        } catch (IOException e) {
            // a temporary directory: left behind at worst
        }
        dir.toFile().delete();
    }
}
