package io.switchboard.protocol;

/**
 * The whole call's deadline ({@link CallOptions#withDeadlineAfter}) passed before another attempt
 * could start: no fallback, retry or failover was made. {@link #delivery()} says whether an
 * earlier attempt may have run the operation ({@link Delivery#MAY_HAVE_RUN}) or none reached it.
 * Steps that repeat calls never repeat this one.
 *
 * <pre>{@code
 * try {
 *     echo.withOptions(CallOptions.DEFAULT.withDeadlineAfter(Duration.ofMillis(300))).increment(1);
 * } catch (DeadlineExceededException e) {
 *     boolean mayHaveRun = e.delivery() == TransportException.Delivery.MAY_HAVE_RUN;
 * }
 * }</pre>
 */
public class DeadlineExceededException extends TransportException {
    public DeadlineExceededException(String protocol, Delivery delivery, String message, Throwable cause) {
        super(protocol, delivery, message, cause);
    }
}
