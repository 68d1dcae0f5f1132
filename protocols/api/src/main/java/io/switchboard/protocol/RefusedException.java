package io.switchboard.protocol;

/**
 * The server (or the client's own encoder) refused the message before running the operation:
 * too large, too deep, malformed, unknown operation. An answer, not a transport failure: repeating
 * it elsewhere would be refused the same way.
 */
public class RefusedException extends SwitchboardException {
    private final String reason;
    private final String field;

    public RefusedException(String reason, String message) {
        this(reason, null, message, null);
    }

    public RefusedException(String reason, String message, Throwable cause) {
        this(reason, null, message, cause);
    }

    /** A refusal of one field's value; {@code field} may be null when the whole message is at fault. */
    public RefusedException(String reason, String field, String message, Throwable cause) {
        super(message, cause);
        this.reason = reason;
        this.field = field;
    }

    /** A short code for the refusal, e.g. {@code size-limit}, {@code malformed}, {@code unknown-operation}. */
    public String reason() {
        return reason;
    }

    /**
     * The field the refusal names, or null when it concerns the whole message. A SOAP reader names
     * the element's path from the message element ({@code echoList/sb-graph/LinkEntry[2]/iint}); the
     * protobuf codecs and the checks before sending name {@code Type.field} ({@code LinkEntry[node 1].iint}
     * for a linked node).
     */
    public String field() {
        return field;
    }
}
