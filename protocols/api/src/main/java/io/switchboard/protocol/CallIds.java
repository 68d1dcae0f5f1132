package io.switchboard.protocol;

import java.security.SecureRandom;

/**
 * Call ids: what a client names a call by, the same on each of its repeats, and what a server
 * accepts as one. A new id is 128 bits from {@link SecureRandom} as 32 hex digits: a server
 * remembers an id for its caller, so an id must not follow from ids seen before (they are
 * exported as trace attributes). A well-formed id has 1 to {@value #MAX_LENGTH} characters of
 * {@code A-Z a-z 0-9 - _ . : + / =}: hex, a UUID, base64 and base64url, and the readable ids a
 * caller may choose ({@code order-42}); a server refuses any other as {@code malformed} rather
 * than remember arbitrary text. API.
 *
 * <pre>{@code
 * CallOptions once = CallOptions.DEFAULT.withCallId(CallIds.next());
 * stub.withOptions(once).deposit("alice", 100);   // a repeat with the same options runs at most once
 * }</pre>
 */
public final class CallIds {
    /** The longest call id a server accepts. */
    public static final int MAX_LENGTH = 128;

    private static final char[] HEX = "0123456789abcdef".toCharArray();
    /**
     * One shared generator, the platform's default (NativePRNG on Linux: /dev/urandom mixed with
     * SHA1PRNG). Its instances share one state process-wide, so one per thread would buy nothing;
     * DRBG, shared or per thread, measured slower. About a microsecond an id.
     */
    private static final SecureRandom RANDOM = new SecureRandom();

    private CallIds() {
    }

    /** A new call id: 128 bits from {@link SecureRandom}, 32 lower-case hex digits. */
    public static String next() {
        byte[] bits = new byte[16];
        RANDOM.nextBytes(bits);
        char[] hex = new char[32];
        for (int i = 0; i < 16; i++) {
            hex[2 * i] = HEX[(bits[i] >> 4) & 0xF];
            hex[2 * i + 1] = HEX[bits[i] & 0xF];
        }
        return new String(hex);
    }

    /** Whether {@code id} is a call id a server accepts (see the class comment); false for null. */
    public static boolean wellFormed(String id) {
        if (id == null || id.isEmpty() || id.length() > MAX_LENGTH) {
            return false;
        }
        for (int i = 0; i < id.length(); i++) {
            char c = id.charAt(i);
            boolean ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9')
                    || c == '-' || c == '_' || c == '.' || c == ':' || c == '+' || c == '/' || c == '=';
            if (!ok) {
                return false;
            }
        }
        return true;
    }

    /** What a refusal of a malformed call id says. */
    public static String rule() {
        return "a call id has 1 to " + MAX_LENGTH + " characters of A-Z a-z 0-9 - _ . : + / =";
    }
}
