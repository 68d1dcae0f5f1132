package io.switchboard.metastub;

import io.switchboard.idl.runtime.DeclaredFault;
import io.switchboard.idl.runtime.OperationDescriptor;
import io.switchboard.protocol.TransportException;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The failsafe: when a call chosen by a policy fails on a protocol other than SOAP with a
 * {@link TransportException}, it runs again over SOAP (with the same call id) if that cannot run
 * the operation twice: the request never reached the operation, the operation is idempotent, or
 * the server answers a repeated call id with the first result. Otherwise the caller gets a
 * {@code TransportException} saying the operation may have run. The failed protocol goes into
 * back-off ({@link ProtocolHealth}); an answer (a response or a declared fault) ends it. Refusals,
 * declared faults and remote errors are answers: never repeated. A pinned call is not repeated
 * elsewhere. The loop is {@link RetryingInterceptor}'s.
 */
final class FailsafeInterceptor extends RetryingInterceptor {
    private static final Logger LOG = LoggerFactory.getLogger(FailsafeInterceptor.class);

    private final ProtocolHealth health;
    private final boolean serverRecognisesCallIds;

    FailsafeInterceptor(ProtocolHealth health, boolean serverRecognisesCallIds) {
        this.health = health;
        this.serverRecognisesCallIds = serverRecognisesCallIds;
    }

    @Override
    protected void ended(ClientCall call, Throwable failure) {
        if (failure == null || failure instanceof DeclaredFault) {
            health.succeeded(call.protocol());
        }
    }

    @Override
    protected Throwable retry(ClientCall call, Throwable failure) {
        if (!(failure instanceof TransportException e) || call.pinned
                || failure instanceof io.switchboard.protocol.DrainingException) {
            return failure;   // a draining server refuses over SOAP too: another replica takes the call
        }
        OperationDescriptor operation = call.operation();
        if (call.fallback()) {
            TransportException first = call.fallbackCause;
            if (first.delivery() == TransportException.Delivery.MAY_HAVE_RUN
                    && e.delivery() == TransportException.Delivery.NOT_DELIVERED) {
                // the first attempt may have run even though the fallback never arrived: say so,
                // or a caller that moves to another replica would run the operation twice
                return new TransportException(ProtocolSuite.FAILSAFE, TransportException.Delivery.MAY_HAVE_RUN,
                        operation.name() + " over " + call.fallbackFrom + " may have run; the fallback over SOAP was "
                                + "not delivered (" + e.getMessage() + ")", e);
            }
            return failure;
        }
        String protocol = call.protocol();
        if (ProtocolSuite.FAILSAFE.equals(protocol)) {
            return failure;
        }
        health.failed(protocol);
        String why = repeatable(operation, e);
        if (why == null) {
            return new TransportException(protocol, TransportException.Delivery.MAY_HAVE_RUN,
                    operation.name() + " failed and was not repeated over SOAP: it is not idempotent and the "
                            + "server does not recognise call ids (" + e.getMessage() + ")", e);
        }
        LOG.debug("{}.{} over {} failed ({}); repeating over SOAP: {}", call.component(), operation.name(),
                protocol, e.getMessage(), why);
        call.fallbackCause = e;
        call.fallbackFrom = protocol;
        call.repeat(ProtocolSuite.FAILSAFE, "fallback from " + protocol + " (" + why + ")", true);
        return null;
    }

    /** Why a call that failed on a fast protocol may run again over SOAP, or null if it may not. */
    private String repeatable(OperationDescriptor operation, TransportException failure) {
        if (failure.delivery() == TransportException.Delivery.NOT_DELIVERED) {
            return "the request never reached the operation";
        }
        if (operation.idempotent()) {
            return "the operation is idempotent";
        }
        if (serverRecognisesCallIds) {
            return "the server answers a repeated call id with the first result";
        }
        return null;
    }
}
