package io.switchboard.protocol;

import java.time.Duration;
import java.util.HashMap;
import java.util.Map;
import java.util.Objects;

/**
 * Immutable per-call settings, carried from a stub to the channel and transports: a timeout per
 * attempt, an optional deadline for the whole call, and typed options that layers above the
 * protocols define (a pinned protocol, a policy) without this class knowing them.
 *
 * <p>{@link #withTimeout} bounds each attempt: a call that fails over gRPC and falls back to SOAP
 * gives each of the two the full timeout. {@link #withDeadlineAfter} bounds the whole call, every
 * attempt included (as grpc-java's {@code CallOptions.withDeadlineAfter}, except that the clock
 * starts when each call starts, not when the options are made: a stub's options can be reused);
 * a meta-stub's {@code DeadlineInterceptor} fixes it and gives each attempt the smaller of the
 * time left and its timeout.
 *
 * <pre>{@code
 * static final CallOptions.Key<String> PROTOCOL = CallOptions.Key.of("protocol", null);
 * CallOptions opts = CallOptions.DEFAULT.withTimeout(Duration.ofSeconds(2)).with(PROTOCOL, "soap");
 * echo.withOptions(opts).echoDoubles(values);
 * echo.withOptions(CallOptions.DEFAULT.withDeadlineAfter(Duration.ofMillis(500))).echoDoubles(values);
 * }</pre>
 */
public final class CallOptions {
    public static final CallOptions DEFAULT = new CallOptions(null, null, Map.of(), null, null, null);

    private final Duration timeout;
    private final String callId;
    private final Map<Key<?>, Object> values;
    private final WireBytes wireBytes;
    /** The whole call's time as the caller gave it; null: no deadline. */
    private final Duration deadlineAfter;
    /** The deadline fixed when the call started, in {@link System#nanoTime()} terms; null until then. */
    private final Long deadlineNanoTime;

    private CallOptions(Duration timeout, String callId, Map<Key<?>, Object> values, WireBytes wireBytes,
                        Duration deadlineAfter, Long deadlineNanoTime) {
        this.timeout = timeout;
        this.callId = callId;
        this.values = values;
        this.wireBytes = wireBytes;
        this.deadlineAfter = deadlineAfter;
        this.deadlineNanoTime = deadlineNanoTime;
    }

    /**
     * Where the transport that carries this call adds the bytes it actually sent and received;
     * null when nobody counts. The meta-stub sets a fresh one on every attempt.
     */
    public WireBytes wireBytes() {
        return wireBytes;
    }

    public CallOptions withWireBytes(WireBytes counter) {
        return new CallOptions(timeout, callId, values, counter, deadlineAfter, deadlineNanoTime);
    }

    /**
     * The id of this call, the same on every protocol it is tried on, so that a server that
     * remembers recent calls answers a repeat with the first result instead of running it twice.
     * Set by the meta-stub; null when the caller talks to a transport directly.
     */
    public String callId() {
        return callId;
    }

    /**
     * A copy with call id {@code id} (null: none); a new one comes from {@link CallIds#next()}.
     *
     * @throws IllegalArgumentException when {@code id} is not {@linkplain CallIds#wellFormed well-formed}
     */
    public CallOptions withCallId(String id) {
        if (id != null && !CallIds.wellFormed(id)) {
            throw new IllegalArgumentException(CallIds.rule());
        }
        return new CallOptions(timeout, id, values, wireBytes, deadlineAfter, deadlineNanoTime);
    }

    /**
     * These options with a new call id from {@link CallIds#next()}, well-formed as made (not checked
     * again, as {@link #withCallId} checks a caller's).
     *
     * <pre>{@code
     * CallOptions once = CallOptions.DEFAULT.withNewCallId();
     * }</pre>
     */
    public CallOptions withNewCallId() {
        return new CallOptions(timeout, CallIds.next(), values, wireBytes, deadlineAfter, deadlineNanoTime);
    }

    /**
     * Time the caller waits for the response of one attempt; null means the transport's default.
     * A call repeated elsewhere (the failsafe's fallback, another replica) gives each attempt this
     * much; {@link #withDeadlineAfter} bounds them all together.
     */
    public Duration timeout() {
        return timeout;
    }

    public CallOptions withTimeout(Duration newTimeout) {
        requirePositive("timeout", newTimeout);
        return new CallOptions(newTimeout, callId, values, wireBytes, deadlineAfter, deadlineNanoTime);
    }

    /** The whole call's time, every attempt included, as given to {@link #withDeadlineAfter}; null: none. */
    public Duration deadlineAfter() {
        return deadlineAfter;
    }

    /**
     * Gives the whole call, every attempt included (fallback, retry, failover), at most {@code
     * duration} from the moment it starts: each attempt gets the smaller of the time left and its
     * {@link #timeout}, and once the time is up no further attempt starts; the caller then gets a
     * {@link DeadlineExceededException}. The clock starts at each call, so options with a deadline
     * can be kept on a stub. Null removes the deadline.
     */
    public CallOptions withDeadlineAfter(Duration duration) {
        requirePositive("deadline", duration);
        return new CallOptions(timeout, callId, values, wireBytes, duration, null);
    }

    /**
     * The deadline fixed when the call started, in {@link System#nanoTime()} terms; null before
     * (or without a deadline). Set by the meta-stub's deadline step, so that every step and
     * attempt below, through nested channels, counts down to the same instant.
     */
    public Long deadlineNanoTime() {
        return deadlineNanoTime;
    }

    /** Fixes the deadline at {@code nanoTime} ({@link System#nanoTime()} terms); keeps {@link #deadlineAfter} for messages. */
    public CallOptions withDeadlineNanoTime(long nanoTime) {
        return new CallOptions(timeout, callId, values, wireBytes, deadlineAfter, nanoTime);
    }

    private static void requirePositive(String what, Duration d) {
        if (d != null && (d.isNegative() || d.isZero())) {
            throw new IllegalArgumentException(what + " must be positive: " + d);
        }
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
        return new CallOptions(timeout, callId, Map.copyOf(copy), wireBytes, deadlineAfter, deadlineNanoTime);
    }

    @Override
    public String toString() {
        return "CallOptions[timeout=" + timeout + (deadlineAfter == null ? "" : ", deadline after " + deadlineAfter)
                + ", callId=" + callId + ", " + values + "]";
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
