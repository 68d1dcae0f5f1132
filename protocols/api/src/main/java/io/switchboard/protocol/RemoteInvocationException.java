package io.switchboard.protocol;

/**
 * The server ran (or started to run) the operation and it failed with an error the interface does
 * not declare. The message is the server's; the operation may have had effects.
 */
public class RemoteInvocationException extends SwitchboardException {
    private final String remoteType;

    public RemoteInvocationException(String message, String remoteType) {
        super(message);
        this.remoteType = remoteType;
    }

    public RemoteInvocationException(String message, String remoteType, Throwable cause) {
        super(message, cause);
        this.remoteType = remoteType;
    }

    /** The server-side error class or fault code, when the server said; may be null. */
    public String remoteType() {
        return remoteType;
    }
}
