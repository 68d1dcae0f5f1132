package io.switchboard.protocol;

import java.time.Duration;

/**
 * Settings of a protocol server. Defaults: loopback only, an ephemeral port, 64 MiB messages,
 * 2,000,000 linked nodes per message, a 60 s idle timeout, requests that must arrive within 30 s
 * plus their size at 64 KiB/s, at most 512 open connections per listener (128 from one remote
 * address) and 512 calls running at once per gRPC or tcp server.
 *
 * <pre>{@code
 * ServerSettings s = ServerSettings.defaults().withBindAddress("0.0.0.0").withPort(8081);
 * // stricter against slow senders and floods: 10 s plus size at 64 KiB/s per request, 256 connections
 * ServerSettings strict = s.withRequestTimeout(Duration.ofSeconds(10)).withMaxConnections(256);
 * }</pre>
 *
 * @param bindAddress      address to listen on: {@code 127.0.0.1} (default), {@code 0.0.0.0} for all
 * @param port             port to listen on; 0 picks a free one
 * @param advertisedHost   host name written into endpoints; null means the bind address (or the
 *                         loopback name when binding to all addresses)
 * @param maxMessageBytes  largest request body accepted
 * @param maxGraphNodes    most linked-structure nodes in one message
 * @param idleTimeout      a connection that sends nothing for this long is closed
 * @param tls              TLS on every listener ({@code https://} SOAP, {@code grpcs://} gRPC) with this key;
 *                         with a trust store in it, callers must present a certificate it trusts
 *                         (mutual TLS); null for plain text
 * @param requestTimeout   SOAP: a request's head and body must arrive within this time plus their
 *                         size at {@code minRequestBytesPerSecond}, counted from its first byte;
 *                         a slower sender gets 408 and its connection is closed. tcp: a frame's
 *                         whole body must arrive within this time, whatever size it announces.
 *                         gRPC: a call's answer must be taken within this time of its close, or
 *                         its connection is closed (a client that grants no window holds it)
 * @param minRequestBytesPerSecond the slowest rate a request may arrive at once {@code requestTimeout} is spent
 * @param maxConnections   most open connections of a listener (SOAP, gRPC, tcp); at the limit a
 *                         new one displaces the connection stalled longest (idle, or a request
 *                         begun and not finished), or is refused if every one is working
 * @param maxConcurrentCalls gRPC: most calls running at once, each on a worker thread of its own,
 *                         half of them from one connection at most (tcp: the same);
 *                         one more is refused at once with {@code UNAVAILABLE} and the
 *                         {@code sb-busy} trailer, before it runs, so the client may try
 *                         elsewhere (SOAP is bounded by {@code maxConnections}: a thread per call
 *                         in progress)
 * @param tokenVerifier    verifies the bearer tokens callers send (gRPC {@code authorization}, SOAP's HTTP
 *                         {@code Authorization}, tcp's {@code authentication_data}); a call with a token that
 *                         does not verify is refused, one without a token keeps its transport's peer; null:
 *                         tokens are not looked at
 * @param maxConnectionsPerAddress most open connections of a listener from one remote address; a
 *                         new one over it displaces that address's own connection stalled
 *                         longest, so a host flooding a listener with stalled connections costs
 *                         only itself, and another client of the same host still gets in
 */
public record ServerSettings(String bindAddress, int port, String advertisedHost, long maxMessageBytes,
                             int maxGraphNodes, Duration idleTimeout, TlsSettings tls, Duration requestTimeout,
                             long minRequestBytesPerSecond, int maxConnections, int maxConcurrentCalls,
                             TokenVerifier tokenVerifier, int maxConnectionsPerAddress) {
    private static final Duration DEFAULT_REQUEST_TIMEOUT = Duration.ofSeconds(30);
    private static final long DEFAULT_MIN_REQUEST_BYTES_PER_SECOND = 64 << 10;
    private static final int DEFAULT_MAX_CONNECTIONS = 512;
    private static final int DEFAULT_MAX_CONCURRENT_CALLS = 512;
    private static final int DEFAULT_MAX_CONNECTIONS_PER_ADDRESS = 128;

    public ServerSettings {
        if (port < 0 || port > 65535) {
            throw new IllegalArgumentException("port out of range: " + port);
        }
        if (maxMessageBytes <= 0 || maxGraphNodes <= 0 || minRequestBytesPerSecond <= 0 || maxConnections <= 0
                || maxConcurrentCalls <= 0 || maxConnectionsPerAddress <= 0) {
            throw new IllegalArgumentException("limits must be positive");
        }
        if (requestTimeout == null || requestTimeout.isNegative() || requestTimeout.isZero()) {
            throw new IllegalArgumentException("request timeout must be positive: " + requestTimeout);
        }
        if (tls != null) {
            tls.checkServable();
        }
    }

    /** Settings with the default request deadline, rate and connection limit. */
    public ServerSettings(String bindAddress, int port, String advertisedHost, long maxMessageBytes, int maxGraphNodes,
                          Duration idleTimeout, TlsSettings tls) {
        this(bindAddress, port, advertisedHost, maxMessageBytes, maxGraphNodes, idleTimeout, tls,
                DEFAULT_REQUEST_TIMEOUT, DEFAULT_MIN_REQUEST_BYTES_PER_SECOND, DEFAULT_MAX_CONNECTIONS,
                DEFAULT_MAX_CONCURRENT_CALLS, null, DEFAULT_MAX_CONNECTIONS_PER_ADDRESS);
    }

    /** Settings without TLS (the form before TLS existed). */
    public ServerSettings(String bindAddress, int port, String advertisedHost, long maxMessageBytes, int maxGraphNodes,
                          Duration idleTimeout) {
        this(bindAddress, port, advertisedHost, maxMessageBytes, maxGraphNodes, idleTimeout, null);
    }

    public static ServerSettings defaults() {
        return new ServerSettings("127.0.0.1", 0, null, 64L << 20, 2_000_000, Duration.ofSeconds(60), null);
    }

    /** Serves over TLS with this key (and requires trusted client certificates if it has a trust store); null: plain text. */
    public ServerSettings withTls(TlsSettings serverTls) {
        return new ServerSettings(bindAddress, port, advertisedHost, maxMessageBytes, maxGraphNodes, idleTimeout,
                serverTls, requestTimeout, minRequestBytesPerSecond, maxConnections, maxConcurrentCalls, tokenVerifier,
                maxConnectionsPerAddress);
    }

    public ServerSettings withBindAddress(String address) {
        return new ServerSettings(address, port, advertisedHost, maxMessageBytes, maxGraphNodes, idleTimeout, tls,
                requestTimeout, minRequestBytesPerSecond, maxConnections, maxConcurrentCalls, tokenVerifier,
                maxConnectionsPerAddress);
    }

    public ServerSettings withPort(int newPort) {
        return new ServerSettings(bindAddress, newPort, advertisedHost, maxMessageBytes, maxGraphNodes, idleTimeout, tls,
                requestTimeout, minRequestBytesPerSecond, maxConnections, maxConcurrentCalls, tokenVerifier,
                maxConnectionsPerAddress);
    }

    public ServerSettings withAdvertisedHost(String host) {
        return new ServerSettings(bindAddress, port, host, maxMessageBytes, maxGraphNodes, idleTimeout, tls,
                requestTimeout, minRequestBytesPerSecond, maxConnections, maxConcurrentCalls, tokenVerifier,
                maxConnectionsPerAddress);
    }

    public ServerSettings withMaxMessageBytes(long bytes) {
        return new ServerSettings(bindAddress, port, advertisedHost, bytes, maxGraphNodes, idleTimeout, tls,
                requestTimeout, minRequestBytesPerSecond, maxConnections, maxConcurrentCalls, tokenVerifier,
                maxConnectionsPerAddress);
    }

    public ServerSettings withMaxGraphNodes(int nodes) {
        return new ServerSettings(bindAddress, port, advertisedHost, maxMessageBytes, nodes, idleTimeout, tls,
                requestTimeout, minRequestBytesPerSecond, maxConnections, maxConcurrentCalls, tokenVerifier,
                maxConnectionsPerAddress);
    }

    public ServerSettings withIdleTimeout(Duration timeout) {
        return new ServerSettings(bindAddress, port, advertisedHost, maxMessageBytes, maxGraphNodes, timeout, tls,
                requestTimeout, minRequestBytesPerSecond, maxConnections, maxConcurrentCalls, tokenVerifier,
                maxConnectionsPerAddress);
    }

    /** A request's head and body must arrive within this plus their size at the minimum rate. */
    public ServerSettings withRequestTimeout(Duration timeout) {
        return new ServerSettings(bindAddress, port, advertisedHost, maxMessageBytes, maxGraphNodes, idleTimeout, tls,
                timeout, minRequestBytesPerSecond, maxConnections, maxConcurrentCalls, tokenVerifier,
                maxConnectionsPerAddress);
    }

    public ServerSettings withMinRequestBytesPerSecond(long bytesPerSecond) {
        return new ServerSettings(bindAddress, port, advertisedHost, maxMessageBytes, maxGraphNodes, idleTimeout, tls,
                requestTimeout, bytesPerSecond, maxConnections, maxConcurrentCalls, tokenVerifier,
                maxConnectionsPerAddress);
    }

    public ServerSettings withMaxConnections(int connections) {
        return new ServerSettings(bindAddress, port, advertisedHost, maxMessageBytes, maxGraphNodes, idleTimeout, tls,
                requestTimeout, minRequestBytesPerSecond, connections, maxConcurrentCalls, tokenVerifier,
                maxConnectionsPerAddress);
    }

    /** Most calls a gRPC server runs at once; one more is refused at once as busy (see the record's doc). */
    public ServerSettings withMaxConcurrentCalls(int calls) {
        return new ServerSettings(bindAddress, port, advertisedHost, maxMessageBytes, maxGraphNodes, idleTimeout, tls,
                requestTimeout, minRequestBytesPerSecond, maxConnections, calls, tokenVerifier,
                maxConnectionsPerAddress);
    }

    /** Verifies callers' bearer tokens with {@code verifier}; null: tokens are not looked at (the default). */
    public ServerSettings withTokenVerifier(TokenVerifier verifier) {
        return new ServerSettings(bindAddress, port, advertisedHost, maxMessageBytes, maxGraphNodes, idleTimeout, tls,
                requestTimeout, minRequestBytesPerSecond, maxConnections, maxConcurrentCalls, verifier,
                maxConnectionsPerAddress);
    }

    /** Most connections from one remote address (see the record's doc). */
    public ServerSettings withMaxConnectionsPerAddress(int connections) {
        return new ServerSettings(bindAddress, port, advertisedHost, maxMessageBytes, maxGraphNodes, idleTimeout, tls,
                requestTimeout, minRequestBytesPerSecond, maxConnections, maxConcurrentCalls, tokenVerifier, connections);
    }

    /**
     * The host to put in endpoint addresses: the advertised host when set; for a wildcard bind
     * ({@code 0.0.0.0}, {@code ::}) the host's first non-loopback address, so that other hosts can
     * reach what the registry publishes; otherwise the bind address.
     */
    public String hostForEndpoints() {
        if (advertisedHost != null) {
            return advertisedHost;
        }
        return isWildcard(bindAddress) ? HostAddresses.FIRST_NON_LOOPBACK : bindAddress;
    }

    /** Whether {@code address} means every interface. */
    public static boolean isWildcard(String address) {
        return "0.0.0.0".equals(address) || "::".equals(address) || "[::]".equals(address);
    }

    /** The host's addresses, looked up once. */
    static final class HostAddresses {
        /** The first address of an interface that is up, not loopback and not link-local, IPv4 first; 127.0.0.1 if none. */
        static final String FIRST_NON_LOOPBACK = firstNonLoopback();

        private HostAddresses() {
        }

        private static String firstNonLoopback() {
            String v6 = null;
            try {
                for (java.net.NetworkInterface nic : java.util.Collections.list(
                        java.net.NetworkInterface.getNetworkInterfaces())) {
                    if (!nic.isUp() || nic.isLoopback()) {
                        continue;
                    }
                    for (java.net.InetAddress a : java.util.Collections.list(nic.getInetAddresses())) {
                        if (a.isLoopbackAddress() || a.isLinkLocalAddress() || a.isAnyLocalAddress()) {
                            continue;
                        }
                        if (a instanceof java.net.Inet4Address) {
                            return a.getHostAddress();
                        }
                        if (v6 == null) {
                            v6 = a.getHostAddress().replaceFirst("%.*$", "");
                        }
                    }
                }
            } catch (java.net.SocketException e) {
                // no interfaces to look at: loopback below
            }
            return v6 != null ? v6 : "127.0.0.1";
        }
    }
}
