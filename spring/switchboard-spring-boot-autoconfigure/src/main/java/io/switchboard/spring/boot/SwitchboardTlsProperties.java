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
 * switchboard.tls.revocation-list=/etc/switchboard/ca.crl
 * }</pre>
 *
 * @param keyStore       this party's key and certificate; with it, servers speak TLS
 * @param trustStore     the CAs trusted; on a server, with it, client certificates are required
 * @param password       both stores' password
 * @param revocationList CRLs the trust store's CAs signed: peers whose certificates they revoke are
 *                       refused ({@link TlsSettings#withRevocationList}); needs the trust store
 */
@ConfigurationProperties("switchboard.tls")
public record SwitchboardTlsProperties(Path keyStore, Path trustStore, String password, Path revocationList) {

    /** The settings these properties describe; null when neither store is given (no TLS). */
    public TlsSettings settings() {
        if (revocationList != null && trustStore == null) {
            throw new IllegalArgumentException("switchboard.tls.revocation-list needs switchboard.tls.trust-store: "
                    + "the lists name certificates of the authorities it holds");
        }
        if (keyStore == null && trustStore == null) {
            return null;
        }
        char[] pass = password == null ? new char[0] : password.toCharArray();
        TlsSettings tls = keyStore == null ? TlsSettings.trustStore(trustStore, pass)
                : trustStore == null ? TlsSettings.keyStore(keyStore, pass) : TlsSettings.of(keyStore, trustStore, pass);
        return revocationList == null ? tls : tls.withRevocationList(revocationList);
    }

    @Override
    public String toString() {
        // the password stays out of logs and failure analyses
        return "SwitchboardTlsProperties[keyStore=" + keyStore + ", trustStore=" + trustStore + ", revocationList="
                + revocationList + "]";
    }
}
