package io.switchboard.protocol;

import java.time.Duration;
import java.util.HashMap;
import java.util.Map;
import java.util.Objects;

/**
 * Immutable per-call settings, carried from a stub to the channel and transports: a deadline, and
 * typed options that layers above the protocols define (a pinned protocol, a policy) without this
 * class knowing them.
 *
 * <pre>{@code
 * static final CallOptions.Key<String> PROTOCOL = CallOptions.Key.of("protocol", null);
 * CallOptions opts = CallOptions.DEFAULT.withTimeout(Duration.ofSeconds(2)).with(PROTOCOL, "soap");
 * echo.withOptions(opts).echoDoubles(values);
 * }</pre>
 */
public final class CallOptions {
    public static final CallOptions DEFAULT = new CallOptions(null, null, Map.of(), null);

    private final Duration timeout;
    private final String callId;
    private final Map<Key<?>, Object> values;
    private final WireBytes wireBytes;

    private CallOptions(Duration timeout, String callId, Map<Key<?>, Object> values, WireBytes wireBytes) {
        this.timeout = timeout;
        this.callId = callId;
        this.values = values;
        this.wireBytes = wireBytes;
    }

    /**
     * Where the transport that carries this call adds the bytes it actually sent and received;
     * null when nobody counts. The meta-stub sets a fresh one on every attempt.
     */
    public WireBytes wireBytes() {
        return wireBytes;
    }

    public CallOptions withWireBytes(WireBytes counter) {
        return new CallOptions(timeout, callId, values, counter);
    }

    /**
     * The id of this call, the same on every protocol it is tried on, so that a server that
     * remembers recent calls answers a repeat with the first result instead of running it twice.
     * Set by the meta-stub; null when the caller talks to a transport directly.
     */
    public String callId() {
        return callId;
    }

    public CallOptions withCallId(String id) {
        if (id != null && (id.isEmpty() || id.length() > 128)) {
            throw new IllegalArgumentException("a call id has 1 to 128 characters");
        }
        return new CallOptions(timeout, id, values, wireBytes);
    }

    /** Time the caller waits for the response; null means the transport's default. */
    public Duration timeout() {
        return timeout;
    }

    public CallOptions withTimeout(Duration newTimeout) {
        if (newTimeout != null && (newTimeout.isNegative() || newTimeout.isZero())) {
            throw new IllegalArgumentException("timeout must be positive: " + newTimeout);
        }
        return new CallOptions(newTimeout, callId, values, wireBytes);
    }

    @SuppressWarnings("unchecked")
    public <T> T get(Key<T> key) {
        Object v = values.get(key);
        return v == null ? key.defaultValue : (T) v;
    }

    public <T> CallOptions with(Key<T> key, T value) {
        Map<Key<?>, Object> copy = new HashMap<>(values);
        if (value == null) {
            copy.remove(key);
        } else {
            copy.put(key, value);
        }
        return new CallOptions(timeout, callId, Map.copyOf(copy), wireBytes);
    }

    @Override
    public String toString() {
        return "CallOptions[timeout=" + timeout + ", callId=" + callId + ", " + values + "]";
    }

    /** A typed option key; compared by identity. */
    public static final class Key<T> {
        private final String name;
        private final T defaultValue;

        private Key(String name, T defaultValue) {
            this.name = Objects.requireNonNull(name);
            this.defaultValue = defaultValue;
        }

        public static <T> Key<T> of(String name, T defaultValue) {
            return new Key<>(name, defaultValue);
        }

        @Override
        public String toString() {
            return name;
        }
    }
}
