package io.switchboard.protocol;

import java.time.Duration;

/**
 * Settings of a protocol client. Defaults: 5 s to connect, 120 s per call unless the call says
 * otherwise, 64 MiB responses, 2,000,000 linked nodes per message.
 */
public record ClientSettings(Duration connectTimeout, Duration callTimeout, long maxMessageBytes, int maxGraphNodes) {
    public static ClientSettings defaults() {
        return new ClientSettings(Duration.ofSeconds(5), Duration.ofSeconds(120), 64L << 20, 2_000_000);
    }

    public ClientSettings withCallTimeout(Duration timeout) {
        return new ClientSettings(connectTimeout, timeout, maxMessageBytes, maxGraphNodes);
    }

    public ClientSettings withMaxMessageBytes(long bytes) {
        return new ClientSettings(connectTimeout, callTimeout, bytes, maxGraphNodes);
    }

    /** The timeout of one call: the call's own, or the default. */
    public Duration timeoutFor(CallOptions options) {
        return options.timeout() != null ? options.timeout() : callTimeout;
    }
}
