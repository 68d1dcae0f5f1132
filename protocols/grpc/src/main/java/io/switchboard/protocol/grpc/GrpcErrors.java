package io.switchboard.protocol.grpc;

import io.grpc.Metadata;
import io.switchboard.protocol.TraceContext;
import io.grpc.Status;
import io.switchboard.codec.message.WireFormatException;
import io.switchboard.protocol.PermissionDeniedException;
import io.switchboard.protocol.RefusedException;
import io.switchboard.protocol.RemoteInvocationException;
import io.switchboard.protocol.SwitchboardException;
import io.switchboard.protocol.TransportException;
import java.net.ConnectException;
import java.net.NoRouteToHostException;
import java.net.UnknownHostException;

/**
 * How failures travel as gRPC statuses, both ways. A refusal is INVALID_ARGUMENT (malformed) or
 * RESOURCE_EXHAUSTED (a limit) with the reason code in the {@code sb-refused} trailer; an
 * operation that failed is UNKNOWN with the server's message as the description and its error
 * class in {@code sb-error-type}. A declared fault is FAILED_PRECONDITION with the fault's message
 * as the description and, in the {@code google.rpc.Status} details ({@code grpc-status-details-bin}),
 * the fault message as {@code google.protobuf.Any} of type
 * {@code type.googleapis.com/switchboard.<name>.<opFault>}: what any gRPC client reads with its
 * rich-error support. A call the authorization policy denied is PERMISSION_DENIED (UNAUTHENTICATED
 * for credentials that did not verify), as gRPC's own {@code grpc-authz} answers. A server whose every worker runs a call answers UNAVAILABLE with the
 * {@code sb-busy} trailer: the call did not run, and may go elsewhere.
 */
final class GrpcErrors {
    static final Metadata.Key<String> REFUSED = Metadata.Key.of("sb-refused", Metadata.ASCII_STRING_MARSHALLER);
    /** Request header: the call id, so that a server running a DeduplicatingSkeleton runs a repeat once. */
    /** A bearer token ({@code Bearer <jwt>}), as gRPC's own call credentials send it. */
    static final Metadata.Key<String> AUTHORIZATION = Metadata.Key.of("authorization", Metadata.ASCII_STRING_MARSHALLER);
    static final Metadata.Key<String> CALL_ID = Metadata.Key.of("sb-call-id", Metadata.ASCII_STRING_MARSHALLER);
    /** The W3C trace context of a call, under its W3C names (as OpenTelemetry's gRPC instrumentation sends it). */
    static final Metadata.Key<String> TRACEPARENT =
            Metadata.Key.of(TraceContext.TRACEPARENT, Metadata.ASCII_STRING_MARSHALLER);
    static final Metadata.Key<String> TRACESTATE =
            Metadata.Key.of(TraceContext.TRACESTATE, Metadata.ASCII_STRING_MARSHALLER);
    static final Metadata.Key<String> ERROR_TYPE = Metadata.Key.of("sb-error-type", Metadata.ASCII_STRING_MARSHALLER);
    /** The server ran none of the call: every worker was busy (its value: the server's limit). */
    static final Metadata.Key<String> BUSY = Metadata.Key.of("sb-busy", Metadata.ASCII_STRING_MARSHALLER);
    /** The server is draining: it ran none of the call, another replica may ({@link io.switchboard.protocol.DrainingException}). */
    static final Metadata.Key<String> DRAINING = Metadata.Key.of("sb-draining", Metadata.ASCII_STRING_MARSHALLER);
    /** Beside {@link #REFUSED} on a denied call: the path the policy denied ({@link PermissionDeniedException#path()}). */
    static final Metadata.Key<String> DENIED_PATH = Metadata.Key.of("sb-denied-path", Metadata.ASCII_STRING_MARSHALLER);
    /** Beside {@link #REFUSED}: the field a refusal names ({@code Type.field}), when it names one. */
    static final Metadata.Key<String> REFUSED_FIELD = Metadata.Key.of("sb-refused-field", Metadata.ASCII_STRING_MARSHALLER);

    /** Request and response header: the size of the whole message as one protobuf message, so the reader can size its arrays. */
    static final Metadata.Key<String> SIZE = Metadata.Key.of("sb-size", Metadata.ASCII_STRING_MARSHALLER);
    /** The status code of a declared fault. */
    static final Status.Code FAULT = Status.Code.FAILED_PRECONDITION;

    private GrpcErrors() {
    }

    /** The announced size in {@code headers}, or -1 when absent or not a number. */
    static long size(Metadata headers) {
        String v = headers == null ? null : headers.get(SIZE);
        if (v == null || v.isEmpty() || v.length() > 19 || !v.chars().allMatch(Character::isDigit)) {
            return -1;
        }
        return Long.parseLong(v);
    }

    /** The type URL of an operation's declared fault message in the status details. */
    static String faultTypeUrl(io.switchboard.idl.runtime.OperationDescriptor op) {
        return "type.googleapis.com/" + io.switchboard.codec.proto.ProtoSchemas.protoPackage(op.service().name()) + "."
                + op.faultElement().getLocalPart();
    }

    /** Server side: a declared fault, its message (protobuf bytes) in the status details. */
    static io.grpc.StatusRuntimeException fault(io.switchboard.idl.runtime.OperationDescriptor op, Throwable fault,
                                                 byte[] info) {
        com.google.rpc.Status status = com.google.rpc.Status.newBuilder().setCode(FAULT.value())
                .setMessage(fault.getMessage() != null ? fault.getMessage() : op.faultElement().getLocalPart())
                .addDetails(com.google.protobuf.Any.newBuilder().setTypeUrl(faultTypeUrl(op))
                        .setValue(com.google.protobuf.ByteString.copyFrom(info)))
                .build();
        return io.grpc.protobuf.StatusProto.toStatusRuntimeException(status);
    }

    /** Client side: the declared fault's message bytes in a failed call's details, or null when it carries none. */
    static byte[] faultInfo(io.switchboard.idl.runtime.OperationDescriptor op, Status status, Metadata trailers) {
        if (op.faultElement() == null || status.getCode() != FAULT || trailers == null) {
            return null;
        }
        com.google.rpc.Status details = io.grpc.protobuf.StatusProto.fromStatusAndTrailers(status, trailers);
        if (details == null) {
            return null;
        }
        String url = faultTypeUrl(op);
        for (com.google.protobuf.Any any : details.getDetailsList()) {
            if (any.getTypeUrl().equals(url)) {
                return any.getValue().toByteArray();
            }
        }
        return null;
    }

    /** Server side: a request that could not be decoded. */
    static Status refusal(WireFormatException e, String what, Metadata trailers) {
        trailers.put(REFUSED, e.reason());
        if (e.field() != null && e.field().chars().allMatch(c -> c >= 0x20 && c < 0x7F)) {
            trailers.put(REFUSED_FIELD, e.field());   // schema names; an ASCII header value or none
        }
        Status code = e.isLimit() ? Status.RESOURCE_EXHAUSTED : Status.INVALID_ARGUMENT;
        return code.withDescription((e.isLimit() ? "request to " : "malformed request to ") + what + ": " + e.getMessage());
    }

    /** Server side: the operation threw something its interface does not declare. */
    static Status failure(Throwable e, Metadata trailers) {
        if (e instanceof PermissionDeniedException denied) {
            return denial(denied, trailers);
        }
        if (e instanceof io.switchboard.protocol.DrainingException) {
            trailers.put(DRAINING, "1");
            return Status.UNAVAILABLE.withDescription(e.getMessage());
        }
        if (e instanceof RefusedException r && r.reason() != null) {
            // a step of the server's chain refused the call before it ran (a reused call id, say)
            trailers.put(REFUSED, r.reason());
            if (r.field() != null && r.field().chars().allMatch(c -> c >= 0x20 && c < 0x7F)) {
                trailers.put(REFUSED_FIELD, r.field());
            }
            return Status.FAILED_PRECONDITION.withDescription(r.getMessage());
        }
        trailers.put(ERROR_TYPE, e.getClass().getName());
        return Status.UNKNOWN.withDescription(e.getMessage() != null ? e.getMessage() : e.toString());
    }

    /**
     * Server side: a call refused because of who made it, as gRPC's own authorization answers:
     * PERMISSION_DENIED (UNAUTHENTICATED for credentials that did not verify), the reason and the
     * path in trailers for Switchboard's clients.
     */
    static Status denial(PermissionDeniedException e, Metadata trailers) {
        trailers.put(REFUSED, e.reason());
        if (e.path() != null && e.path().chars().allMatch(c -> c >= 0x20 && c < 0x7F)) {
            trailers.put(DENIED_PATH, e.path());
        }
        return (e.unauthenticated() ? Status.UNAUTHENTICATED : Status.PERMISSION_DENIED).withDescription(e.getMessage());
    }

    /** Client side: the exception a failed call ends with. */
    static SwitchboardException toException(Status status, Metadata trailers, String what, String endpoint) {
        String description = status.getDescription() != null ? status.getDescription() : status.getCode().toString();
        if (status.getCode() == Status.Code.PERMISSION_DENIED || status.getCode() == Status.Code.UNAUTHENTICATED) {
            String path = trailers == null ? null : trailers.get(DENIED_PATH);
            return new PermissionDeniedException(status.getCode() == Status.Code.UNAUTHENTICATED
                    ? PermissionDeniedException.UNAUTHENTICATED : PermissionDeniedException.DENIED, path, description);
        }
        String refused = trailers == null ? null : trailers.get(REFUSED);
        if (refused != null) {
            return new RefusedException(refused, trailers.get(REFUSED_FIELD), description, status.asRuntimeException());
        }
        if (trailers != null && trailers.get(DRAINING) != null) {
            return new io.switchboard.protocol.DrainingException(GrpcProtocolProvider.NAME, what + " at " + endpoint
                    + ": " + description, status.asRuntimeException());
        }
        if ((trailers != null && trailers.get(BUSY) != null) || concurrentCallLimit(status)) {
            return new TransportException(GrpcProtocolProvider.NAME, TransportException.Delivery.NOT_DELIVERED,
                    what + " at " + endpoint + ": " + description, status.asRuntimeException());
        }
        String errorType = trailers == null ? null : trailers.get(ERROR_TYPE);
        if (errorType != null) {
            return new RemoteInvocationException(description, errorType, status.asRuntimeException());
        }
        return switch (status.getCode()) {
            case INVALID_ARGUMENT -> new RefusedException(WireFormatException.MALFORMED, description, status.asRuntimeException());
            case RESOURCE_EXHAUSTED -> new RefusedException(WireFormatException.SIZE_LIMIT, description,
                    status.asRuntimeException());
            case UNIMPLEMENTED -> new TransportException(GrpcProtocolProvider.NAME, TransportException.Delivery.NOT_DELIVERED,
                    what + " is not served at " + endpoint + ": " + description, status.asRuntimeException());
            case UNAVAILABLE -> new TransportException(GrpcProtocolProvider.NAME,
                    neverConnected(status) ? TransportException.Delivery.NOT_DELIVERED : TransportException.Delivery.MAY_HAVE_RUN,
                    "cannot reach " + endpoint + " for " + what + ": " + description, status.asRuntimeException());
            case DEADLINE_EXCEEDED -> new TransportException(GrpcProtocolProvider.NAME, TransportException.Delivery.MAY_HAVE_RUN,
                    what + " at " + endpoint + " exceeded its deadline: " + description, status.asRuntimeException());
            default -> new TransportException(GrpcProtocolProvider.NAME, TransportException.Delivery.MAY_HAVE_RUN,
                    what + " at " + endpoint + " failed with " + status.getCode() + ": " + description,
                    status.asRuntimeException());
        };
    }

    /**
     * grpcio's server over its {@code maximum_concurrent_rpcs} (the Python package's server sets
     * it): RESOURCE_EXHAUSTED with this description, before the call reached any handler. It says
     * "busy, not run", not "your request is too large".
     */
    static final String GRPCIO_CONCURRENT_CALL_LIMIT = "Concurrent RPC limit exceeded!";

    private static boolean concurrentCallLimit(Status status) {
        return status.getCode() == Status.Code.RESOURCE_EXHAUSTED && GRPCIO_CONCURRENT_CALL_LIMIT.equals(status.getDescription());
    }

    /**
     * UNAVAILABLE because no connection could be made, or the server refused its TLS handshake: the
     * request never reached the server's gRPC.
     */
    private static boolean neverConnected(Status status) {
        if (io.switchboard.protocol.spi.TlsRefusals.refusedHandshake(status.getCause())) {
            return true;
        }
        for (Throwable c = status.getCause(); c != null; c = c.getCause() == c ? null : c.getCause()) {
            if (c instanceof ConnectException || c instanceof UnknownHostException || c instanceof NoRouteToHostException) {
                return true;
            }
        }
        return false;
    }
}
