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
    public static final CallOptions DEFAULT = new CallOptions(null, Map.of());

    private final Duration timeout;
    private final Map<Key<?>, Object> values;

    private CallOptions(Duration timeout, Map<Key<?>, Object> values) {
        this.timeout = timeout;
        this.values = values;
    }

    /** Time the caller waits for the response; null means the transport's default. */
    public Duration timeout() {
        return timeout;
    }

    public CallOptions withTimeout(Duration newTimeout) {
        if (newTimeout != null && (newTimeout.isNegative() || newTimeout.isZero())) {
            throw new IllegalArgumentException("timeout must be positive: " + newTimeout);
        }
        return new CallOptions(newTimeout, values);
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
        return new CallOptions(timeout, Map.copyOf(copy));
    }

    @Override
    public String toString() {
        return "CallOptions[timeout=" + timeout + ", " + values + "]";
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
