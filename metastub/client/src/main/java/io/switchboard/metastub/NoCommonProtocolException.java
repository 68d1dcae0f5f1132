package io.switchboard.metastub;

import io.switchboard.protocol.SwitchboardException;

/** The call asks for a protocol that client and server do not share. Nothing was sent. */
public class NoCommonProtocolException extends SwitchboardException {
    public NoCommonProtocolException(String message) {
        super(message);
    }
}
