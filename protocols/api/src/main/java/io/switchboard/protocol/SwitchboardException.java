package io.switchboard.protocol;

/** Base of the unchecked exceptions a Switchboard call can end with (besides declared faults). */
public class SwitchboardException extends RuntimeException {
    public SwitchboardException(String message) {
        super(message);
    }

    public SwitchboardException(String message, Throwable cause) {
        super(message, cause);
    }
}
