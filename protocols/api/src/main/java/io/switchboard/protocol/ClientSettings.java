package io.switchboard.protocol;

import java.time.Duration;
import java.util.concurrent.Executor;
import java.util.function.Supplier;

/**
 * Settings of a protocol client. Defaults: 5 s to connect, 120 s per call unless the call says
 * otherwise, 64 MiB responses, 2,000,000 linked nodes per message; {@code https} endpoints
 * checked against the JVM's trust store.
 *
 * <pre>{@code
 * ClientSettings s = ClientSettings.defaults().withTls(TlsSettings.of(Path.of("me.p12"), Path.of("trust.p12"), pw));
 * }</pre>
 *
 * @param tls      whom to trust on TLS endpoints ({@code https://}, {@code grpcs://}) and the key to
 *                 present to servers that require one; null: the JVM's default trust store, no key
 * @param executor the threads protocol clients run their work on (the gRPC client decodes the
 *                 responses of non-blocking calls there); null: each client makes and shuts down
 *                 its own pool. An executor given here belongs to the caller: clients, meta-stubs
 *                 and {@code Switchboard} never shut it down, so shut it down after closing them
 * @param token    the bearer token to send with every call, asked per call so that it may rotate
 *                 (null from it: none for that call); null: no token
 * @param callerName the name this client's calls go by in this process: a call over the local
 *                 protocol names its caller so ({@code Peer.Authentication.IN_PROCESS}) unless the
 *                 call's options name another; null: the local protocol's default
 */
public record ClientSettings(Duration connectTimeout, Duration callTimeout, long maxMessageBytes, int maxGraphNodes,
                             TlsSettings tls, Executor executor, Supplier<String> token, String callerName) {
    /** Settings without a caller name (the form before in-process callers were named). */
    public ClientSettings(Duration connectTimeout, Duration callTimeout, long maxMessageBytes, int maxGraphNodes,
                          TlsSettings tls, Executor executor, Supplier<String> token) {
        this(connectTimeout, callTimeout, maxMessageBytes, maxGraphNodes, tls, executor, token, null);
    }

    /** Settings without a bearer token (the form before tokens existed). */
    public ClientSettings(Duration connectTimeout, Duration callTimeout, long maxMessageBytes, int maxGraphNodes,
                          TlsSettings tls, Executor executor) {
        this(connectTimeout, callTimeout, maxMessageBytes, maxGraphNodes, tls, executor, null);
    }

    /** Settings that trust what the JVM trusts (the form before TLS settings existed). */
    public ClientSettings(Duration connectTimeout, Duration callTimeout, long maxMessageBytes, int maxGraphNodes) {
        this(connectTimeout, callTimeout, maxMessageBytes, maxGraphNodes, null, null);
    }

    /** Settings whose clients make their own threads (the form before executors could be given). */
    public ClientSettings(Duration connectTimeout, Duration callTimeout, long maxMessageBytes, int maxGraphNodes,
                          TlsSettings tls) {
        this(connectTimeout, callTimeout, maxMessageBytes, maxGraphNodes, tls, null);
    }

    public static ClientSettings defaults() {
        return new ClientSettings(Duration.ofSeconds(5), Duration.ofSeconds(120), 64L << 20, 2_000_000, null, null,
                null, null);
    }

    /** Trusts what {@code clientTls} trusts on TLS endpoints and presents its key; null: the JVM's default trust, no key. */
    public ClientSettings withTls(TlsSettings clientTls) {
        return new ClientSettings(connectTimeout, callTimeout, maxMessageBytes, maxGraphNodes, clientTls, executor,
                token, callerName);
    }

    public ClientSettings withCallTimeout(Duration timeout) {
        return new ClientSettings(connectTimeout, timeout, maxMessageBytes, maxGraphNodes, tls, executor, token,
                callerName);
    }

    public ClientSettings withMaxMessageBytes(long bytes) {
        return new ClientSettings(connectTimeout, callTimeout, bytes, maxGraphNodes, tls, executor, token, callerName);
    }

    /**
     * Runs the clients' work on {@code threads} instead of pools of their own; null: their own
     * (the default). The caller keeps it and shuts it down, after closing the clients that use it.
     *
     * <pre>{@code
     * ExecutorService readers = Executors.newFixedThreadPool(8);
     * try (Switchboard sb = Switchboard.builder(url).settings(ClientSettings.defaults().withExecutor(readers)).connect()) {
     *     ...
     * } finally {
     *     readers.shutdown();
     * }
     * }</pre>
     */
    public ClientSettings withExecutor(Executor threads) {
        return new ClientSettings(connectTimeout, callTimeout, maxMessageBytes, maxGraphNodes, tls, threads, token,
                callerName);
    }

    /**
     * Sends the bearer token {@code supplier} gives with every call (asked per call, so a token
     * may rotate); null: none. Every protocol sends it: gRPC as {@code authorization: Bearer},
     * SOAP as HTTP {@code Authorization: Bearer}, tcp in {@code authentication_data}. Over plain
     * text a token is sent as it is, readable by anyone on the path: give tokens only to clients
     * that call TLS endpoints.
     *
     * <pre>{@code
     * ClientSettings s = ClientSettings.defaults().withTls(tls)
     *         .withToken(() -> Files.readString(Path.of("/run/secrets/token")).strip());
     * }</pre>
     */
    public ClientSettings withToken(Supplier<String> supplier) {
        return new ClientSettings(connectTimeout, callTimeout, maxMessageBytes, maxGraphNodes, tls, executor,
                supplier, callerName);
    }

    /**
     * Names the caller of this client's calls in this process ({@code name}; null: none): a
     * component that calls another in the same JVM over the local protocol is then that
     * component to the one it calls, and to its authorization policy. A remote protocol proves
     * its caller otherwise (certificate, token) and ignores this name.
     *
     * <pre>{@code
     * ClientSettings reports = ClientSettings.defaults().withCallerName("reports");
     * }</pre>
     */
    public ClientSettings withCallerName(String name) {
        return new ClientSettings(connectTimeout, callTimeout, maxMessageBytes, maxGraphNodes, tls, executor, token,
                name == null || name.isBlank() ? null : name);
    }

    /** The token to send with a call now, or null for none. */
    public String tokenNow() {
        if (token == null) {
            return null;
        }
        String t = token.get();
        return t == null || t.isBlank() ? null : t.strip();
    }

    /**
     * The timeout of one call: the call's own, or the default; no more than the time its whole
     * call has left ({@link CallOptions#deadlineNanoTime}) when asked, which is what protocols send
     * the server as the call's deadline.
     */
    public Duration timeoutFor(CallOptions options) {
        Duration timeout = options.timeout() != null ? options.timeout() : callTimeout;
        Long deadline = options.deadlineNanoTime();
        if (deadline != null) {
            // the time the whole call has left now, as the request goes out (a call can wait for a
            // pool thread or a connection after its attempt started): what the server is told
            long left = deadline - System.nanoTime();
            if (left < timeout.toNanos()) {
                return Duration.ofNanos(Math.max(1, left));
            }
        }
        return timeout;
    }
}
