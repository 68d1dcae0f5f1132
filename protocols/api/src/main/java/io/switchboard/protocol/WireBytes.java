package io.switchboard.protocol;

/**
 * The bytes one call actually put on the wire and took off it, as its transport counts them:
 * SOAP the HTTP request and response bodies (the envelopes, after any chunked framing is
 * removed); gRPC the parts of its messages (each a typed protobuf message, and gRPC's
 * five-byte prefix; not HTTP/2 framing); the in-process protocol the bytes of the binary
 * encoding it copied the messages through (0 for a message shared by reference). -1 until the
 * transport counts anything.
 * One writer per direction at a time; read it after the call returned.
 *
 * <pre>{@code
 * WireBytes wire = new WireBytes();
 * transport.call(operation, request, CallOptions.DEFAULT.withWireBytes(wire));
 * long sent = wire.sent(), received = wire.received();
 * }</pre>
 */
public final class WireBytes {
    private volatile long sent = -1;
    private volatile long received = -1;

    /** Request bytes sent, or -1 when the transport sent none it could count. */
    public long sent() {
        return sent;
    }

    /** Response bytes received, or -1 when none were counted (a one-way call, a failure before any). */
    public long received() {
        return received;
    }

    public void addSent(long bytes) {
        sent = Math.max(0, sent) + bytes;
    }

    public void addReceived(long bytes) {
        received = Math.max(0, received) + bytes;
    }

    @Override
    public String toString() {
        return "WireBytes[sent=" + sent + ", received=" + received + "]";
    }
}
