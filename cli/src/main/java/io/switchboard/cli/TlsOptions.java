package io.switchboard.cli;

import io.switchboard.protocol.ClientSettings;
import io.switchboard.protocol.ServerSettings;
import io.switchboard.protocol.TlsSettings;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import picocli.CommandLine.Option;

/**
 * The TLS flags every command shares (a picocli mixin): a server serves {@code https://} and
 * {@code grpcs://} with its key store and, given a trust store, requires callers to present a
 * certificate it trusts; a client trusts the servers its trust store vouches for and presents its
 * key store's certificate. One password, from a file or {@value #PASSWORD_ENV}, opens both stores;
 * it is never printed.
 *
 * <pre>{@code
 * ./switchboard registry --tls-keystore registry.p12 --tls-truststore ca.p12 --tls-password-file pw
 * ./switchboard serve echo --registry URL --tls-keystore me.p12 --tls-truststore ca.p12 --tls-crl ca.crl ...
 * ./switchboard list --registry https://host:8081/axis2/services/Registry \
 *     --tls-truststore ca.p12 --tls-keystore me.p12 --tls-password-file pw
 * }</pre>
 */
final class TlsOptions {
    static final String PASSWORD_ENV = "SWITCHBOARD_TLS_PASSWORD";

    @Option(names = "--tls-keystore", paramLabel = "P12", description = "PKCS#12 key store with this party's key and "
            + "certificate chain. A server serves https:// and grpcs:// with it; a client presents it to servers "
            + "that require client certificates.")
    Path keyStore;

    @Option(names = "--tls-truststore", paramLabel = "P12", description = "PKCS#12 trust store. A server then "
            + "requires every caller to present a certificate signed by what it holds (mutual TLS); a client trusts "
            + "only the servers it vouches for (default: the JVM's trust store).")
    Path trustStore;

    @Option(names = "--tls-password-file", paramLabel = "FILE", description = "File holding the password of the "
            + "key and trust stores (default: the " + PASSWORD_ENV + " environment variable).")
    Path passwordFile;

    @Option(names = "--tls-crl", paramLabel = "FILE", description = "Revocation lists (CRLs, PEM or DER, each signed "
            + "by a certificate of the trust store): a peer whose chain holds a certificate they revoke, or whose "
            + "issuer has no list here, fails the handshake. Read again when the file changes. Needs --tls-truststore.")
    Path revocationList;

    /** The settings the flags describe, or null when no store is named (plain text for a server). */
    TlsSettings settings() {
        if (revocationList != null && trustStore == null) {
            throw new IllegalArgumentException("--tls-crl needs --tls-truststore: the lists name certificates of the "
                    + "authorities it holds");
        }
        if (keyStore == null && trustStore == null) {
            return null;
        }
        char[] password = password();
        try {
            TlsSettings tls = TlsSettings.of(keyStore, trustStore, password);
            return revocationList == null ? tls : tls.withRevocationList(revocationList);
        } finally {
            java.util.Arrays.fill(password, '\0');
        }
    }

    /** Client settings with these flags' TLS (none: the JVM's trust, no key). */
    ClientSettings client() {
        return ClientSettings.defaults().withTls(settings());
    }

    /** A server's TLS, or null for plain text; a trust store without a key store is refused (a server needs a key). */
    TlsSettings serverTls() {
        if (keyStore == null && trustStore != null) {
            throw new IllegalArgumentException("a server needs --tls-keystore to serve TLS (--tls-truststore alone "
                    + "only says whom to trust)");
        }
        return settings();
    }

    /** {@code base} with the server's TLS ({@link #serverTls}). */
    ServerSettings server(ServerSettings base) {
        return base.withTls(serverTls());
    }

    /** What a server prints about its TLS: the files, never the password. */
    String describeServer() {
        if (keyStore == null) {
            return "off (plain http and grpc)";
        }
        return "on, key from " + keyStore + (trustStore == null ? "; any caller (no client certificates)"
                : "; callers need a certificate trusted by " + trustStore
                + (revocationList == null ? "" : " and not revoked by " + revocationList));
    }

    private char[] password() {
        if (passwordFile != null) {
            try {
                return Files.readString(passwordFile, StandardCharsets.UTF_8).strip().toCharArray();
            } catch (IOException e) {
                throw new IllegalArgumentException("cannot read " + passwordFile + ": " + e.getMessage(), e);
            }
        }
        String env = System.getenv(PASSWORD_ENV);
        if (env == null) {
            throw new IllegalArgumentException("--tls-keystore and --tls-truststore need their password: "
                    + "--tls-password-file FILE or " + PASSWORD_ENV);
        }
        return env.toCharArray();
    }
}
