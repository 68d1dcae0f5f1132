package io.switchboard.registry;

import com.google.common.collect.MapMaker;
import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.HexFormat;
import java.util.Map;

/**
 * The digests by which {@code lookupLean} names an interface document: SHA-256 of its UTF-8 text,
 * 64 lower-case hex digits. A {@link Memo} keeps the digests of the documents it has seen, so that
 * a registry answering thousands of lookups a second hashes each schema once, not once per answer.
 *
 * <pre>{@code
 * String d = SchemaDigests.of(entry.interfaceSchema());
 * boolean same = SchemaDigests.matches(d, text);   // a client checks every document it is sent
 * }</pre>
 */
public final class SchemaDigests {
    /** The most digests a {@code lookupLean} may list as known; a name's instances share a few at most. */
    public static final int MAX_KNOWN = 64;
    private static final int HEX_DIGITS = 64;

    private SchemaDigests() {
    }

    /** The digest of {@code text}; null for null. */
    public static String of(String text) {
        if (text == null) {
            return null;
        }
        try {
            return HexFormat.of().formatHex(MessageDigest.getInstance("SHA-256")
                    .digest(text.getBytes(StandardCharsets.UTF_8)));
        } catch (NoSuchAlgorithmException e) {
            throw new IllegalStateException("every Java platform has SHA-256", e);
        }
    }

    /** True if {@code digest} has the form of one (64 lower-case hex digits). */
    public static boolean isDigest(String digest) {
        if (digest == null || digest.length() != HEX_DIGITS) {
            return false;
        }
        for (int i = 0; i < HEX_DIGITS; i++) {
            char c = digest.charAt(i);
            if (!(c >= '0' && c <= '9' || c >= 'a' && c <= 'f')) {
                return false;
            }
        }
        return true;
    }

    /** True if {@code text} is the document {@code digest} names. */
    public static boolean matches(String digest, String text) {
        return text != null && of(text).equals(digest);
    }

    /**
     * The digests of the documents asked for. A store hands out the same string for an entry on
     * every lookup, so the digest is found first by that string's identity (held weakly: it goes
     * with the entry), without reading the text; a string not seen yet is found by its text among
     * the last {@code capacity} distinct documents (one hash per document, not per instance bound
     * with it), and only a document not among them is hashed.
     */
    public static final class Memo {
        /** Keyed by identity and held weakly (Guava's weak keys compare by {@code ==}). */
        private final Map<String, String> byInstance = new MapMaker().weakKeys().makeMap();
        private final SizedLru<String, String> byText;

        public Memo(int capacity) {
            this.byText = SizedLru.ofEntries(capacity);
        }

        /** The digest of {@code text}, computed at most once while it stays among the last asked for. */
        public String of(String text) {
            if (text == null) {
                return null;
            }
            String d = byInstance.get(text);
            if (d != null) {
                return d;
            }
            d = byText.get(text);
            if (d == null) {
                d = SchemaDigests.of(text);   // not under the map's lock: hashing tens of kilobytes
                byText.put(text, d);
            }
            byInstance.put(text, d);
            return d;
        }
    }
}
