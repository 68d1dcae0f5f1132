package io.switchboard.codec.binary;

/**
 * A binary message that cannot be read or written: malformed (truncated, wrong tag, dangling
 * reference) or over a limit. {@link #reason()} is the short code a protocol reports
 * ({@code malformed}, {@code size-limit}, {@code node-limit}, {@code string-limit}, {@code depth-limit}, and
 * {@code chunk-limit} for the chunks a protocol cuts a message into).
 */
public class WireFormatException extends RuntimeException {
    public static final String MALFORMED = "malformed";
    public static final String SIZE_LIMIT = "size-limit";
    public static final String NODE_LIMIT = "node-limit";
    public static final String STRING_LIMIT = "string-limit";
    public static final String CHUNK_LIMIT = "chunk-limit";
    /** Heterogeneous lists nested deeper than the limit. */
    public static final String DEPTH_LIMIT = "depth-limit";

    private final String reason;

    public WireFormatException(String reason, String message) {
        super(message);
        this.reason = reason;
    }

    public static WireFormatException malformed(String message) {
        return new WireFormatException(MALFORMED, message);
    }

    public String reason() {
        return reason;
    }

    /** Whether the message was refused for a limit rather than for its form. */
    public boolean isLimit() {
        return !MALFORMED.equals(reason);
    }
}
