package io.switchboard.protocol;

import java.time.Duration;

/**
 * Settings of a protocol client. Defaults: 5 s to connect, 120 s per call unless the call says
 * otherwise, 64 MiB responses, 2,000,000 linked nodes per message; {@code https} endpoints
 * checked against the JVM's trust store.
 *
 * <pre>{@code
 * ClientSettings s = ClientSettings.defaults().withTls(TlsSettings.of(Path.of("me.p12"), Path.of("trust.p12"), pw));
 * }</pre>
 *
 * @param tls whom to trust on TLS endpoints ({@code https://}, {@code grpcs://}) and the key to
 *            present to servers that require one; null: the JVM's default trust store, no key
 */
public record ClientSettings(Duration connectTimeout, Duration callTimeout, long maxMessageBytes, int maxGraphNodes,
                             TlsSettings tls) {
    /** Settings that trust what the JVM trusts (the form before TLS settings existed). */
    public ClientSettings(Duration connectTimeout, Duration callTimeout, long maxMessageBytes, int maxGraphNodes) {
        this(connectTimeout, callTimeout, maxMessageBytes, maxGraphNodes, null);
    }

    public static ClientSettings defaults() {
        return new ClientSettings(Duration.ofSeconds(5), Duration.ofSeconds(120), 64L << 20, 2_000_000, null);
    }

    /** Trusts what {@code clientTls} trusts on TLS endpoints and presents its key; null: the JVM's default trust, no key. */
    public ClientSettings withTls(TlsSettings clientTls) {
        return new ClientSettings(connectTimeout, callTimeout, maxMessageBytes, maxGraphNodes, clientTls);
    }

    public ClientSettings withCallTimeout(Duration timeout) {
        return new ClientSettings(connectTimeout, timeout, maxMessageBytes, maxGraphNodes, tls);
    }

    public ClientSettings withMaxMessageBytes(long bytes) {
        return new ClientSettings(connectTimeout, callTimeout, bytes, maxGraphNodes, tls);
    }

    /** The timeout of one call: the call's own, or the default. */
    public Duration timeoutFor(CallOptions options) {
        return options.timeout() != null ? options.timeout() : callTimeout;
    }
}
