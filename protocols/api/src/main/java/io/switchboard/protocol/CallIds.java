package io.switchboard.protocol;

import java.nio.charset.StandardCharsets;
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

    private static final byte[] HEX = "0123456789abcdef".getBytes(StandardCharsets.US_ASCII);
    /**
     * One shared generator, the platform's default (NativePRNG on Linux: /dev/urandom mixed with
     * SHA1PRNG). Its instances share one state process-wide, so one per thread would buy nothing;
     * DRBG, shared or per thread, measured slower.
     */
    private static final SecureRandom RANDOM = new SecureRandom();
    /** Ids whose bits one read from {@link #RANDOM} gives a thread: the read's fixed cost is shared by them. */
    static final int IDS_PER_READ = 64;
    private static final int ID_BYTES = 16;
    /**
     * Each thread's unused bits from its last read, handed out once each and never to another
     * thread: an id still does not follow from ids seen before (they all come from the
     * SecureRandom), and a batch costs less than a read per id (about half on a 2-core machine).
     */
    private static final ThreadLocal<Bits> BITS = ThreadLocal.withInitial(Bits::new);

    private CallIds() {
    }

    /** A new call id: 128 bits from {@link SecureRandom}, 32 lower-case hex digits. */
    public static String next() {
        Bits b = BITS.get();
        if (b.next == b.bits.length) {
            RANDOM.nextBytes(b.bits);
            b.next = 0;
        }
        byte[] hex = new byte[2 * ID_BYTES];
        for (int i = 0; i < ID_BYTES; i++) {
            byte x = b.bits[b.next + i];
            hex[2 * i] = HEX[(x >> 4) & 0xF];
            hex[2 * i + 1] = HEX[x & 0xF];
            b.bits[b.next + i] = 0;   // used: not kept in memory longer than needed
        }
        b.next += ID_BYTES;
        return new String(hex, StandardCharsets.ISO_8859_1);   // Latin-1: the bytes become the string's own
    }

    /** One thread's bits for its next ids. */
    private static final class Bits {
        final byte[] bits = new byte[IDS_PER_READ * ID_BYTES];
        int next = bits.length;
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
