package io.switchboard.spring.boot;

import io.switchboard.protocol.TlsSettings;
import java.nio.file.Path;
import org.springframework.boot.context.properties.ConfigurationProperties;

/**
 * TLS for every listener, every call and the registry, under {@code switchboard.tls}: a PKCS#12
 * key store (this party's certificate) and trust store (the CAs it accepts), one password.
 *
 * <pre>{@code
 * switchboard.tls.key-store=/etc/switchboard/me.p12
 * switchboard.tls.trust-store=/etc/switchboard/ca.p12
 * switchboard.tls.password=${SWITCHBOARD_TLS_PASSWORD}
 * }</pre>
 *
 * @param keyStore   this party's key and certificate; with it, servers speak TLS
 * @param trustStore the CAs trusted; on a server, with it, client certificates are required
 * @param password   both stores' password
 */
@ConfigurationProperties("switchboard.tls")
public record SwitchboardTlsProperties(Path keyStore, Path trustStore, String password) {

    /** The settings these properties describe; null when neither store is given (no TLS). */
    public TlsSettings settings() {
        if (keyStore == null && trustStore == null) {
            return null;
        }
        char[] pass = password == null ? new char[0] : password.toCharArray();
        if (keyStore == null) {
            return TlsSettings.trustStore(trustStore, pass);
        }
        return trustStore == null ? TlsSettings.keyStore(keyStore, pass) : TlsSettings.of(keyStore, trustStore, pass);
    }

    @Override
    public String toString() {
        // the password stays out of logs and failure analyses
        return "SwitchboardTlsProperties[keyStore=" + keyStore + ", trustStore=" + trustStore + "]";
    }
}
