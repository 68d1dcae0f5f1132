package io.switchboard.protocol;

/**
 * The server is shutting down gracefully (draining): it refused the call before it ran, and
 * another replica can take it. Always {@link Delivery#NOT_DELIVERED}. Every protocol carries it
 * (gRPC: UNAVAILABLE with the {@code sb-draining} trailer; SOAP: a refusal of reason
 * {@code draining}; tcp: error code 3002; local: as is), so a meta-stub moves the call to another
 * replica and does not fall back to SOAP on the same server, which is draining too.
 *
 * <pre>{@code
 * ServerInterceptor drain = (call, next) -> {
 *     if (draining) {
 *         throw new DrainingException(call.protocol(), call.component() + " is draining: the call did not run", null);
 *     }
 *     return next.proceed(call);
 * };
 * }</pre>
 */
public class DrainingException extends TransportException {
    /** The refusal reason protocols carry it under. */
    public static final String REASON = "draining";

    public DrainingException(String protocol, String message, Throwable cause) {
        super(protocol, Delivery.NOT_DELIVERED, message, cause);
    }
}
