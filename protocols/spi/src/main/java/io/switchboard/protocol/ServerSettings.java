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
 */
public record ServerSettings(String bindAddress, int port, String advertisedHost, long maxMessageBytes,
                             int maxGraphNodes, Duration idleTimeout) {
    public ServerSettings {
        if (port < 0 || port > 65535) {
            throw new IllegalArgumentException("port out of range: " + port);
        }
        if (maxMessageBytes <= 0 || maxGraphNodes <= 0) {
            throw new IllegalArgumentException("limits must be positive");
        }
    }

    public static ServerSettings defaults() {
        return new ServerSettings("127.0.0.1", 0, null, 64L << 20, 2_000_000, Duration.ofSeconds(60));
    }

    public ServerSettings withBindAddress(String address) {
        return new ServerSettings(address, port, advertisedHost, maxMessageBytes, maxGraphNodes, idleTimeout);
    }

    public ServerSettings withPort(int newPort) {
        return new ServerSettings(bindAddress, newPort, advertisedHost, maxMessageBytes, maxGraphNodes, idleTimeout);
    }

    public ServerSettings withAdvertisedHost(String host) {
        return new ServerSettings(bindAddress, port, host, maxMessageBytes, maxGraphNodes, idleTimeout);
    }

    public ServerSettings withMaxMessageBytes(long bytes) {
        return new ServerSettings(bindAddress, port, advertisedHost, bytes, maxGraphNodes, idleTimeout);
    }

    public ServerSettings withMaxGraphNodes(int nodes) {
        return new ServerSettings(bindAddress, port, advertisedHost, maxMessageBytes, nodes, idleTimeout);
    }

    public ServerSettings withIdleTimeout(Duration timeout) {
        return new ServerSettings(bindAddress, port, advertisedHost, maxMessageBytes, maxGraphNodes, timeout);
    }

    /** The host to put in endpoint addresses. */
    public String hostForEndpoints() {
        if (advertisedHost != null) {
            return advertisedHost;
        }
        return "0.0.0.0".equals(bindAddress) || "::".equals(bindAddress) ? "127.0.0.1" : bindAddress;
    }
}
