package io.switchboard.protocol;

import java.time.Duration;

/**
 * Settings of a protocol server. Defaults: loopback only, an ephemeral port, 64 MiB messages,
 * 2,000,000 linked nodes per message.
 *
 * <pre>{@code
 * ServerSettings s = ServerSettings.defaults().withBindAddress("0.0.0.0").withPort(8081);
 * }</pre>
 *
 * @param bindAddress      address to listen on: {@code 127.0.0.1} (default), {@code 0.0.0.0} for all
 * @param port             port to listen on; 0 picks a free one
 * @param advertisedHost   host name written into endpoints; null means the bind address (or the
 *                         loopback name when binding to all addresses)
 * @param maxMessageBytes  largest request body accepted
 * @param maxGraphNodes    most linked-structure nodes in one message
 * @param idleTimeout      a connection that sends nothing for this long is closed
 * @param tls              the server's key for TLS ({@code https}; SOAP only for now), or null for plain text
 */
public record ServerSettings(String bindAddress, int port, String advertisedHost, long maxMessageBytes,
                             int maxGraphNodes, Duration idleTimeout, TlsSettings tls) {
    public ServerSettings {
        if (port < 0 || port > 65535) {
            throw new IllegalArgumentException("port out of range: " + port);
        }
        if (maxMessageBytes <= 0 || maxGraphNodes <= 0) {
            throw new IllegalArgumentException("limits must be positive");
        }
    }

    /** Settings without TLS (the form before TLS existed). */
    public ServerSettings(String bindAddress, int port, String advertisedHost, long maxMessageBytes, int maxGraphNodes,
                          Duration idleTimeout) {
        this(bindAddress, port, advertisedHost, maxMessageBytes, maxGraphNodes, idleTimeout, null);
    }

    public static ServerSettings defaults() {
        return new ServerSettings("127.0.0.1", 0, null, 64L << 20, 2_000_000, Duration.ofSeconds(60), null);
    }

    /** Serves over TLS with this key; null: plain text. */
    public ServerSettings withTls(TlsSettings serverTls) {
        return new ServerSettings(bindAddress, port, advertisedHost, maxMessageBytes, maxGraphNodes, idleTimeout,
                serverTls);
    }

    public ServerSettings withBindAddress(String address) {
        return new ServerSettings(address, port, advertisedHost, maxMessageBytes, maxGraphNodes, idleTimeout, tls);
    }

    public ServerSettings withPort(int newPort) {
        return new ServerSettings(bindAddress, newPort, advertisedHost, maxMessageBytes, maxGraphNodes, idleTimeout, tls);
    }

    public ServerSettings withAdvertisedHost(String host) {
        return new ServerSettings(bindAddress, port, host, maxMessageBytes, maxGraphNodes, idleTimeout, tls);
    }

    public ServerSettings withMaxMessageBytes(long bytes) {
        return new ServerSettings(bindAddress, port, advertisedHost, bytes, maxGraphNodes, idleTimeout, tls);
    }

    public ServerSettings withMaxGraphNodes(int nodes) {
        return new ServerSettings(bindAddress, port, advertisedHost, maxMessageBytes, nodes, idleTimeout, tls);
    }

    public ServerSettings withIdleTimeout(Duration timeout) {
        return new ServerSettings(bindAddress, port, advertisedHost, maxMessageBytes, maxGraphNodes, timeout, tls);
    }

    /** The host to put in endpoint addresses. */
    public String hostForEndpoints() {
        if (advertisedHost != null) {
            return advertisedHost;
        }
        return "0.0.0.0".equals(bindAddress) || "::".equals(bindAddress) ? "127.0.0.1" : bindAddress;
    }
}
