package io.switchboard.protocol.spi;

import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.Date;
import java.util.concurrent.ConcurrentHashMap;

/**
 * The tokens a {@link JwtTokenVerifier} verified lately, so that a client sending the same token on
 * every call costs one signature check, not one per call (an RSA or EC check takes longer than a
 * small call). Kept by the token's SHA-256, never the token itself; an entry answers only while
 * the keys are the ones it was verified with and its {@code exp} and {@code nbf} hold now. At most
 * {@code capacity} entries: a full memo is emptied and fills again.
 */
final class VerifiedTokens {
    private static final ThreadLocal<MessageDigest> SHA_256 = ThreadLocal.withInitial(() -> {
        try {
            return MessageDigest.getInstance("SHA-256");
        } catch (NoSuchAlgorithmException e) {
            throw new IllegalStateException("every JDK has SHA-256", e);
        }
    });

    private record Entry(String principal, Object keys, long notBefore, long expires) {
    }

    private final int capacity;
    private final long skewMillis;
    private final ConcurrentHashMap<ByteBuffer, Entry> entries = new ConcurrentHashMap<>();

    VerifiedTokens(int capacity, long skewMillis) {
        this.capacity = capacity;
        this.skewMillis = skewMillis;
    }

    /**
     * The key {@code token} is remembered under, whatever its length (an entry holds its digest,
     * never the token); null when none are remembered.
     */
    ByteBuffer keyOf(String token) {
        if (capacity == 0) {
            return null;
        }
        return ByteBuffer.wrap(SHA_256.get().digest(token.getBytes(StandardCharsets.UTF_8)));
    }

    /**
     * The principal of the token remembered under {@code key}, if it was verified with {@code keys}
     * (the verifier's keys now) and is within its times at {@code nowMillis}, give or take the skew;
     * null otherwise (the caller verifies it in full).
     */
    String principal(ByteBuffer key, Object keys, long nowMillis) {
        Entry e = entries.get(key);
        if (e == null) {
            return null;
        }
        if (e.keys() != keys || nowMillis - skewMillis >= e.expires() || nowMillis + skewMillis <= e.notBefore()) {
            entries.remove(key, e);
            return null;
        }
        return e.principal();
    }

    /** Remembers a token just verified with {@code keys}; one without {@code exp} is not remembered. */
    void remember(ByteBuffer key, String principal, Object keys, Date expires, Date notBefore) {
        if (expires == null) {
            return;
        }
        if (entries.size() >= capacity) {
            entries.clear();
        }
        entries.put(key, new Entry(principal, keys, notBefore == null ? Long.MIN_VALUE : notBefore.getTime(), expires.getTime()));
    }
}
