package io.switchboard.protocol;

/**
 * The server (or the client's own encoder) refused the message before running the operation:
 * too large, too deep, malformed, unknown operation. An answer, not a transport failure: repeating
 * it elsewhere would be refused the same way.
 */
public class RefusedException extends SwitchboardException {
    private final String reason;

    public RefusedException(String reason, String message) {
        super(message);
        this.reason = reason;
    }

    public RefusedException(String reason, String message, Throwable cause) {
        super(message, cause);
        this.reason = reason;
    }

    /** A short code for the refusal, e.g. {@code size-limit}, {@code malformed}, {@code unknown-operation}. */
    public String reason() {
        return reason;
    }
}
