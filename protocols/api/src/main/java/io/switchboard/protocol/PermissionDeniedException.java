package io.switchboard.protocol;

/**
 * The server refused a call because of who made it: the authorization policy denied the caller
 * this path, or the caller's credentials (a bearer token) did not verify. The operation did not
 * run ({@link TransportException.Delivery#NOT_DELIVERED}), and the meta-stub does not try the call
 * again on another protocol or replica: the same caller would be refused there too. API.
 *
 * <p>On the wire: gRPC {@code PERMISSION_DENIED} ({@code UNAUTHENTICATED} for bad credentials),
 * a SOAP Fault {@code sb:PermissionDenied}, tcp {@code ERPCAUTH} (1004).
 *
 * <pre>{@code
 * try {
 *     bank.deposit(account, 100);
 * } catch (PermissionDeniedException e) {
 *     LOG.warn("not allowed: {} ({})", e.path(), e.getMessage());
 * }
 * }</pre>
 */
public class PermissionDeniedException extends RefusedException {
    /** {@link #reason()} of a call the policy denied. */
    public static final String DENIED = "permission-denied";
    /** {@link #reason()} of a call whose credentials did not verify. */
    public static final String UNAUTHENTICATED = "unauthenticated";

    private final String path;

    /**
     * @param reason  {@link #DENIED} or {@link #UNAUTHENTICATED}
     * @param path    the path refused, e.g. {@code /switchboard.echo.Echo/echoDoubles}; null when not known
     * @param message what the caller may be told (never the policy's rules or a credential)
     */
    public PermissionDeniedException(String reason, String path, String message) {
        super(reason, message);
        this.path = path;
    }

    /** A call the policy denied on {@code path}. */
    public static PermissionDeniedException denied(String path, String message) {
        return new PermissionDeniedException(DENIED, path, message);
    }

    /** A call whose credentials did not verify. */
    public static PermissionDeniedException unauthenticated(String path, String message) {
        return new PermissionDeniedException(UNAUTHENTICATED, path, message);
    }

    /** The path refused ({@code /package.Service/operation}); null when not known. */
    public String path() {
        return path;
    }

    /** Whether the credentials did not verify, rather than the policy denying a known caller. */
    public boolean unauthenticated() {
        return UNAUTHENTICATED.equals(reason());
    }

    /** Always {@link TransportException.Delivery#NOT_DELIVERED}: the operation did not run. */
    public TransportException.Delivery delivery() {
        return TransportException.Delivery.NOT_DELIVERED;
    }
}
