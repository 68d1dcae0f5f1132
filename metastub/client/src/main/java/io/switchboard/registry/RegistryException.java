package io.switchboard.registry;

import io.switchboard.protocol.SwitchboardException;

/** The registry refused a request: {@link #code()} is {@code unauthorized}, {@code invalid} or {@code already-bound}. */
public class RegistryException extends SwitchboardException {
    private final String code;

    public RegistryException(String code, String message) {
        super(message);
        this.code = code;
    }

    public String code() {
        return code;
    }
}
