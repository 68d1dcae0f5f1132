package io.switchboard.protocol.tcp;

import io.switchboard.codec.message.WireFormatException;
import io.switchboard.protocol.RefusedException;
import io.switchboard.protocol.RemoteInvocationException;
import io.switchboard.protocol.SwitchboardException;
import io.switchboard.protocol.TransportException;
import java.util.HashMap;
import java.util.Map;

/**
 * The {@code error_code}s of a response and the user fields beside them (docs/tcp-wire.md). The
 * codes a brpc client knows keep brpc's numbers ({@code src/brpc/errno.proto}); a declared fault,
 * which brpc has no notion of, has a code of Switchboard's own, with the fault message as the
 * frame's data.
 */
final class TcpErrors {
    /** brpc's ENOSERVICE: no component of that service is exported here; nothing ran. */
    static final int NO_SERVICE = 1001;
    /** brpc's ENOMETHOD: the component has no such operation; nothing ran. */
    static final int NO_METHOD = 1002;
    /** brpc's EREQUEST: the request is malformed; refused before it ran ({@link #REFUSED} says why). */
    static final int BAD_REQUEST = 1003;
    /**
     * brpc's ERPCAUTH: the server refused the call because of who made it (the authorization
     * policy denied it, or the credentials did not verify); nothing ran. {@link #REFUSED} holds
     * {@code permission-denied} or {@code unauthenticated}, {@link #DENIED_PATH} the path.
     */
    static final int AUTH = 1004;
    /** brpc's ERPCTIMEDOUT: the call's {@code timeout_ms} passed on the server. */
    static final int TIMED_OUT = 1008;
    /** brpc's EOVERCROWDED: the server or the connection runs as many calls as it may; this one did not run. */
    static final int OVERCROWDED = 1011;
    /** brpc's EINTERNAL: the operation failed with an error its interface does not declare ({@link #ERROR_TYPE}). */
    static final int INTERNAL = 2001;
    /** brpc's ELIMIT: the request is over a limit; refused before it ran. */
    static final int LIMIT = 2004;
    /** Switchboard's: the operation raised its declared fault; the data is the fault message ({@code opFault}). */
    static final int DECLARED_FAULT = 3001;
    /** Switchboard's: the server is draining (shutting down); the call did not run, another replica may take it. */
    static final int DRAINING = 3002;
    /**
     * Switchboard's: the operation ran, and its answer is over the frame limit; a client repeats
     * the call under its call id over a protocol without that limit, and the server answers the
     * repeat from the first run.
     */
    static final int ANSWER_TOO_LARGE = 3003;

    /** User field of a response: the refusal's reason code ({@code malformed}, {@code size-limit}, ...). */
    static final String REFUSED = "sb-refused";
    /** User field of a response: the field a refusal names ({@code Type.field}). */
    static final String REFUSED_FIELD = "sb-refused-field";
    /** User field of an {@link #AUTH} response: the path the policy denied. */
    static final String DENIED_PATH = "sb-denied-path";
    /**
     * User field of a response after which the server closes the connection (a frame over its
     * limit, whose message it did not read): a client sends no new call on it. An {@code ELIMIT}
     * without it (a message over a limit once decoded or inflated; a brpc server's concurrency
     * limit) leaves the connection in use.
     */
    static final String CLOSING = "sb-closing";
    /** User field of a response: the class of an undeclared error the operation threw. */
    static final String ERROR_TYPE = "sb-error-type";
    /** User field of a request: cancels the call of the same correlation id on this connection; no answer follows. */
    static final String CANCEL = "sb-cancel";

    private TcpErrors() {
    }

    /**
     * Server side: the refusal of a request on a connection whose client certificate is no longer
     * trusted (a resumed TLS session of a caller revoked, or of an authority withdrawn, since it
     * began): not run, and the connection ends ({@link #CLOSING}).
     */
    static RpcMeta noLongerTrusted(long correlationId) {
        Map<String, String> user = new HashMap<>(2);
        user.put(REFUSED, io.switchboard.protocol.PermissionDeniedException.UNAUTHENTICATED);
        user.put(CLOSING, "1");
        return RpcMeta.response(correlationId, AUTH, io.switchboard.protocol.spi.CallerIdentity.NO_LONGER_TRUSTED
                + "; the call did not run", user);
    }

    /** Server side: a request that could not be read, as a response meta. */
    static RpcMeta refusal(long correlationId, WireFormatException e, String what) {
        Map<String, String> user = new HashMap<>(2);
        user.put(REFUSED, e.reason());
        if (e.field() != null) {
            user.put(REFUSED_FIELD, e.field());
        }
        return RpcMeta.response(correlationId, e.isLimit() ? LIMIT : BAD_REQUEST,
                (e.isLimit() ? "request to " : "malformed request to ") + what + ": " + e.getMessage(), user);
    }

    /** Server side: the operation threw something its interface does not declare. */
    static RpcMeta failure(long correlationId, Throwable e) {
        if (e instanceof io.switchboard.protocol.PermissionDeniedException denied) {
            Map<String, String> user = new HashMap<>(2);
            user.put(REFUSED, denied.reason());
            if (denied.path() != null) {
                user.put(DENIED_PATH, denied.path());
            }
            return RpcMeta.response(correlationId, AUTH, denied.getMessage(), user);
        }
        if (e instanceof io.switchboard.protocol.DrainingException) {
            return RpcMeta.response(correlationId, DRAINING, e.getMessage(), null);
        }
        if (e instanceof RefusedException r && r.reason() != null) {
            // a step of the server's chain refused the call before it ran (a reused call id, say)
            Map<String, String> user = new HashMap<>(2);
            user.put(REFUSED, r.reason());
            if (r.field() != null) {
                user.put(REFUSED_FIELD, r.field());
            }
            return RpcMeta.response(correlationId, BAD_REQUEST, r.getMessage(), user);
        }
        return RpcMeta.response(correlationId, INTERNAL, e.getMessage() != null ? e.getMessage() : e.toString(),
                Map.of(ERROR_TYPE, e.getClass().getName()));
    }

    /** Client side: the exception a failed response (not a declared fault) ends its call with. */
    static SwitchboardException toException(RpcMeta meta, String what, String endpoint) {
        String text = meta.errorText() != null ? meta.errorText() : "error " + meta.errorCode();
        String refused = meta.userField(REFUSED);
        if (meta.errorCode() == AUTH) {
            return new io.switchboard.protocol.PermissionDeniedException(
                    io.switchboard.protocol.PermissionDeniedException.UNAUTHENTICATED.equals(refused)
                            ? io.switchboard.protocol.PermissionDeniedException.UNAUTHENTICATED
                            : io.switchboard.protocol.PermissionDeniedException.DENIED, meta.userField(DENIED_PATH), text);
        }
        if (refused != null) {
            return new RefusedException(refused, meta.userField(REFUSED_FIELD), text, null);
        }
        return switch (meta.errorCode()) {
            case BAD_REQUEST -> new RefusedException(WireFormatException.MALFORMED, text);
            case LIMIT -> new RefusedException(WireFormatException.SIZE_LIMIT, text);
            case INTERNAL -> new RemoteInvocationException(text, meta.userField(ERROR_TYPE));
            case NO_SERVICE, NO_METHOD -> new TransportException(TcpProtocolProvider.NAME,
                    TransportException.Delivery.NOT_DELIVERED, what + " is not served at " + endpoint + ": " + text, null);
            case OVERCROWDED -> new TransportException(TcpProtocolProvider.NAME,
                    TransportException.Delivery.NOT_DELIVERED, what + " at " + endpoint + ": " + text, null);
            case DRAINING -> new io.switchboard.protocol.DrainingException(TcpProtocolProvider.NAME,
                    what + " at " + endpoint + ": " + text, null);
            case ANSWER_TOO_LARGE -> new TransportException(TcpProtocolProvider.NAME,
                    TransportException.Delivery.MAY_HAVE_RUN, what + " at " + endpoint + ": " + text, null);
            case TIMED_OUT -> new TransportException(TcpProtocolProvider.NAME, TransportException.Delivery.MAY_HAVE_RUN,
                    what + " at " + endpoint + " exceeded its deadline: " + text, null);
            default -> new RemoteInvocationException(what + " at " + endpoint + " failed with error " + meta.errorCode()
                    + ": " + text, null);
        };
    }
}
