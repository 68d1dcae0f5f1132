package io.switchboard.protocol;

/**
 * A call that could not be completed over a protocol: no connection, the connection broke, a
 * timeout, a malformed answer. {@link #delivery()} says whether the server may have run it, which
 * decides whether the call can safely be repeated elsewhere.
 */
public class TransportException extends SwitchboardException {
    /** Whether the request may have reached the server. */
    public enum Delivery {
        /** The operation never received the request: no connection, or refused before dispatch. */
        NOT_DELIVERED,
        /** The request may have reached the server and run. */
        MAY_HAVE_RUN
    }

    private final String protocol;
    private final Delivery delivery;

    public TransportException(String protocol, Delivery delivery, String message, Throwable cause) {
        super(protocol + ": " + message + (delivery == Delivery.MAY_HAVE_RUN ? " (the operation may have run)" : ""),
                cause);
        this.protocol = protocol;
        this.delivery = delivery;
    }

    public String protocol() {
        return protocol;
    }

    public Delivery delivery() {
        return delivery;
    }
}
