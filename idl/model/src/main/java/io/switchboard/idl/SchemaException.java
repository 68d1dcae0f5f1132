package io.switchboard.idl;

/** An interface schema that cannot be read: malformed, unsafe, or outside the supported subset. */
public class SchemaException extends RuntimeException {
    public SchemaException(String message) {
        super(message);
    }

    public SchemaException(String message, Throwable cause) {
        super(message, cause);
    }
}
