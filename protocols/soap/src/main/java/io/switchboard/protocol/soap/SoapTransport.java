package io.switchboard.protocol.soap;

import io.switchboard.idl.runtime.DeclaredFault;
import io.switchboard.idl.runtime.OperationDescriptor;
import io.switchboard.idl.runtime.ServiceDescriptor;
import io.switchboard.codec.XmlCodec;
import io.switchboard.codec.message.WireFormatException;
import io.switchboard.protocol.AsyncCalls;
import io.switchboard.protocol.CallOptions;
import io.switchboard.protocol.Endpoint;
import io.switchboard.protocol.spi.PhaseMarks;
import io.switchboard.protocol.RefusedException;
import io.switchboard.protocol.RemoteInvocationException;
import io.switchboard.protocol.spi.Transport;
import io.switchboard.protocol.TraceContext;
import io.switchboard.protocol.TransportException;
import jakarta.xml.bind.JAXBException;
import java.io.IOException;
import java.net.ConnectException;
import java.net.NoRouteToHostException;
import java.net.UnknownHostException;
import java.util.concurrent.CompletableFuture;
import org.apache.axiom.om.OMAbstractFactory;
import org.apache.axiom.om.OMElement;
import org.apache.axiom.om.OMException;
import org.apache.axiom.om.OMFactory;
import org.apache.axiom.om.OMNamespace;
import org.apache.axis2.AxisFault;
import org.apache.axis2.addressing.EndpointReference;
import org.apache.axis2.client.Options;
import org.apache.axis2.client.ServiceClient;
import org.apache.axis2.kernel.http.HTTPConstants;
import org.apache.hc.client5.http.ConnectTimeoutException;

/** Calls one component over SOAP. Thread-safe. */
final class SoapTransport implements Transport {
    private static final OMFactory OM = OMAbstractFactory.getOMFactory();
    private static final OMNamespace SB = OM.createOMNamespace(SoapFaults.NS, "sb");

    private final SoapClient client;
    private final ServiceDescriptor descriptor;
    private final Endpoint endpoint;
    private final EndpointReference target;
    private final XmlCodec xml;

    SoapTransport(SoapClient client, ServiceDescriptor descriptor, Endpoint endpoint) {
        this.client = client;
        this.descriptor = descriptor;
        this.endpoint = endpoint;
        this.target = new EndpointReference(endpoint.address());
        this.xml = XmlCodec.of(descriptor, client.settings().maxGraphNodes());
    }

    @Override
    public String protocol() {
        return SoapProtocolProvider.NAME;
    }

    @Override
    public Endpoint endpoint() {
        return endpoint;
    }

    @Override
    public Object call(OperationDescriptor operation, Object request, CallOptions options) throws DeclaredFault {
        if (operation.service() != descriptor) {
            throw new IllegalArgumentException(operation + " is not an operation of " + descriptor.name());
        }
        try {
            xml.check(request);   // Axis2 writes the request while it sends: refuse before the first byte
        } catch (WireFormatException e) {
            throw new RefusedException(e.reason(), e.field(), operation + ": the request cannot be sent: "
                    + e.getMessage(), e);
        }
        ServiceClient sc;
        MessageDataSource source = null;
        try {
            sc = client.borrow();
        } catch (AxisFault e) {
            throw new TransportException(protocol(), TransportException.Delivery.NOT_DELIVERED,
                    "cannot create a SOAP client: " + e.getMessage(), e);
        }
        WireCounting.begin(options.wireBytes());
        // a call with a deadline is cut when it passes, wherever it is (connecting, sending, waiting)
        Long deadline = options.deadlineNanoTime();
        SoapExchange exchange = deadline == null ? null : SoapExchange.CURRENT.get();
        boolean ownExchange = deadline != null && exchange == null;
        if (ownExchange) {
            exchange = new SoapExchange();
            SoapExchange.CURRENT.set(exchange);
        }
        java.util.concurrent.ScheduledFuture<?> cut = exchange == null ? null : exchange.abortAt(deadline);
        try {
            Options o = sc.getOptions();
            o.setTo(target);
            o.setAction(operation.soapAction());
            long timeout = Math.max(1, client.settings().timeoutFor(options).toMillis());   // 0 would be no timeout
            o.setProperty(HTTPConstants.SO_TIMEOUT, (int) timeout);
            // the call's timeout bounds its connect too: a call given 1 s waited up to the connect
            // timeout (5 s by default), or the 3 s in which the kernel gives up on a host that is
            // cut off ("no route to host"), before it could move on to another server
            o.setProperty(HTTPConstants.CONNECTION_TIMEOUT,
                    (int) Math.min(timeout, client.settings().connectTimeout().toMillis()));
            // the bearer token, asked per call (it may rotate); set or cleared on every call: the
            // options are this transport's own and outlive the call
            String token = client.settings().tokenNow();
            o.setProperty(HTTPConstants.HTTP_HEADERS, token == null ? null
                    : java.util.List.of(new org.apache.axis2.context.NamedValue("Authorization", "Bearer " + token)));
            if (options.callId() != null) {
                OMElement header = OM.createOMElement(SoapFaults.CALL_HEADER.getLocalPart(), SB);
                header.addAttribute("id", options.callId(), null);
                sc.addHeader(header);
            }
            // the time the caller has left: the server cancels the operation when it passes, and the
            // calls the operation makes get no more
            OMElement timeLeft = OM.createOMElement(SoapFaults.DEADLINE_HEADER.getLocalPart(), SB);
            timeLeft.addAttribute("timeout-ms", Long.toString(timeout), null);
            sc.addHeader(timeLeft);
            TraceContext trace = options.get(TraceContext.OPTION);
            if (trace != null) {
                OMElement header = OM.createOMElement(SoapFaults.TRACE_HEADER.getLocalPart(),
                        OM.createOMNamespace(SoapFaults.NS, "sb"));
                header.addAttribute(TraceContext.TRACEPARENT, trace.traceparent(), null);
                if (trace.tracestate() != null) {
                    header.addAttribute(TraceContext.TRACESTATE, trace.tracestate(), null);
                }
                sc.addHeader(header);
            }
            source = new MessageDataSource(xml, request);
            OMElement payload = OM.createOMElement(source,
                    operation.requestElement().getLocalPart(),
                    OM.createOMNamespace(operation.requestElement().getNamespaceURI(), "m"));
            if (operation.oneWay()) {
                sc.sendRobust(payload);
                return null;
            }
            OMElement response = sc.sendReceive(payload);
            PhaseMarks.mark(PhaseMarks.Phase.ARRIVED);
            if (!operation.responseElement().equals(response.getQName())) {
                throw new TransportException(protocol(), TransportException.Delivery.MAY_HAVE_RUN,
                        "expected " + operation.responseElement() + " in the response, got " + response.getQName(), null);
            }
            PhaseMarks.mark(PhaseMarks.Phase.DECODE_START);
            Object value = xml.read(response.getXMLStreamReaderWithoutCaching(), operation.responseClass());
            PhaseMarks.mark(PhaseMarks.Phase.DECODE_END);
            return value;
        } catch (AxisFault fault) {
            boolean late = ioCause(fault) instanceof java.net.SocketTimeoutException
                    || (deadline != null && deadline - System.nanoTime() <= 0);
            if (late && options.callId() != null && source != null && source.writtenWhole()) {
                // no answer in time: the server is told to stop (it stops by itself when the
                // deadline it was sent passes, but its clock starts when the request arrived);
                // only a running call: a retry may send it again under the same id
                client.sendCancel(endpoint.address(), options.callId(), true);
            }
            throw translate(operation, fault, source != null && !source.writtenWhole());
        } catch (JAXBException e) {
            throw new TransportException(protocol(), TransportException.Delivery.MAY_HAVE_RUN,
                    "malformed response to " + operation.name() + ": " + SoapFaults.rootMessage(e), e);
        } catch (OMException e) {
            // Axiom streams both ways: a connection broken while the request was written (the
            // operation cannot have read it whole) or while the response was read lazily
            boolean requestIncomplete = source != null && !source.writtenWhole();
            throw new TransportException(protocol(), requestIncomplete ? TransportException.Delivery.NOT_DELIVERED
                    : TransportException.Delivery.MAY_HAVE_RUN, operation.name() + " at " + endpoint.address()
                    + (requestIncomplete ? ": the request was cut while it was sent: " : ": ")
                    + SoapFaults.rootMessage(e), e);
        } finally {
            if (cut != null) {
                cut.cancel(false);
            }
            if (ownExchange) {
                SoapExchange.CURRENT.remove();
            }
            sc.removeHeaders();
            try {
                sc.cleanupTransport();
            } catch (AxisFault ignored) {
                // the connection is discarded by the pool
            }
            WireCounting.end();
            client.release(sc);
        }
    }

    /**
     * The blocking call on the settings' executor, else the shared pool ({@link AsyncCalls#on}); cancelling the future
     * also closes the call's HTTP connection, so the pool thread is free at once, and sends the
     * server a cancel message naming the call id (the call gets one if it has none), which
     * cancels the operation ({@code ServerCallContext.isCancelled()}) if it runs by then.
     */
    @Override
    public CompletableFuture<Object> callAsync(OperationDescriptor operation, Object request, CallOptions callOptions) {
        CallOptions options = callOptions.callId() != null ? callOptions
                : callOptions.withCallId(io.switchboard.protocol.CallIds.next());
        SoapExchange exchange = new SoapExchange();
        CompletableFuture<Object> result = AsyncCalls.on(client.settings().executor(), (op, req, opts) -> {
            SoapExchange.CURRENT.set(exchange);
            try {
                return call(op, req, opts);
            } finally {
                SoapExchange.CURRENT.remove();
            }
        }, operation, request, options);
        result.whenComplete((r, t) -> {
            if (result.isCancelled()) {
                exchange.abort();
                client.sendCancel(endpoint.address(), options.callId(), false);
            }
        });
        return result;
    }

    /** Sorts an Axis2 fault into a declared fault, a refusal, a remote error or a transport failure. */
    private RuntimeException translate(OperationDescriptor operation, AxisFault fault, boolean requestIncomplete)
            throws DeclaredFault {
        OMElement detail = fault.getDetail();
        if (detail != null && operation.faultInfoClass() != null && operation.faultElement().equals(detail.getQName())) {
            Object info;
            try {
                info = xml.read(detail.getXMLStreamReader(), operation.faultInfoClass());
            } catch (JAXBException e) {
                return new RemoteInvocationException("malformed declared fault of " + operation.name() + ": "
                        + SoapFaults.rootMessage(e), null, e);
            }
            throw operation.toException(info);
        }
        if (detail != null && (SoapFaults.PERMISSION_DENIED.equals(detail.getQName()) || deniedAsRefusal(detail))) {
            String reason = detail.getAttributeValue(new javax.xml.namespace.QName("reason"));
            return new io.switchboard.protocol.PermissionDeniedException(
                    io.switchboard.protocol.PermissionDeniedException.UNAUTHENTICATED.equals(reason)
                            ? io.switchboard.protocol.PermissionDeniedException.UNAUTHENTICATED
                            : io.switchboard.protocol.PermissionDeniedException.DENIED,
                    detail.getAttributeValue(new javax.xml.namespace.QName("path")), fault.getMessage());
        }
        if (detail != null && SoapFaults.REFUSED.equals(detail.getQName()) && io.switchboard.protocol.DrainingException
                .REASON.equals(detail.getAttributeValue(new javax.xml.namespace.QName("reason")))) {
            return new io.switchboard.protocol.DrainingException(protocol(), operation.name() + " at "
                    + endpoint.address() + ": " + fault.getMessage(), fault);
        }
        if (detail != null && SoapFaults.REFUSED.equals(detail.getQName())) {
            return new RefusedException(detail.getAttributeValue(new javax.xml.namespace.QName("reason")),
                    detail.getAttributeValue(new javax.xml.namespace.QName("field")), fault.getMessage(), fault);
        }
        Throwable cause = ioCause(fault);
        if (cause instanceof ConnectException || cause instanceof ConnectTimeoutException
                || cause instanceof UnknownHostException || cause instanceof NoRouteToHostException) {
            return new TransportException(protocol(), TransportException.Delivery.NOT_DELIVERED,
                    "cannot connect to " + endpoint.address() + ": " + cause.getMessage(), fault);
        }
        if (io.switchboard.protocol.spi.TlsRefusals.refusedHandshake(fault)) {
            return new TransportException(protocol(), TransportException.Delivery.NOT_DELIVERED,
                    endpoint.address() + " refused this client's TLS handshake: " + (cause != null ? cause
                    : fault.getMessage()), fault);
        }
        if (cause instanceof ServerBusyAnswers.Busy) {
            return new TransportException(protocol(), TransportException.Delivery.NOT_DELIVERED,
                    operation.name() + " at " + endpoint.address() + ": " + cause.getMessage(), fault);
        }
        if (cause != null && requestIncomplete) {   // the connection broke before the request was written whole
            return new TransportException(protocol(), TransportException.Delivery.NOT_DELIVERED, operation.name() + " at "
                    + endpoint.address() + ": the request was cut while it was sent: " + cause, fault);
        }
        if (cause != null) {
            return new TransportException(protocol(), TransportException.Delivery.MAY_HAVE_RUN,
                    operation.name() + " at " + endpoint.address() + ": " + cause, fault);
        }
        int status = httpStatus(fault);
        if (status == 413) {
            return new RefusedException("size-limit", operation.name() + ": the request exceeds the server's size limit "
                    + "(HTTP 413)", fault);
        }
        if (status == 404) {
            return new TransportException(protocol(), TransportException.Delivery.NOT_DELIVERED,
                    descriptor.name() + " is not served at " + endpoint.address() + " (HTTP 404)", fault);
        }
        if (fault.getFaultCode() == null && fault.getFaultCodeElement() == null) {
            return new TransportException(protocol(), TransportException.Delivery.MAY_HAVE_RUN,
                    operation.name() + " at " + endpoint.address() + ": " + fault.getMessage(), fault);
        }
        if (fault.getMessage() != null && fault.getMessage().startsWith("The service cannot be found")) {
            return new TransportException(protocol(), TransportException.Delivery.NOT_DELIVERED,
                    descriptor.name() + " is not served at " + endpoint.address(), fault);
        }
        if (SoapFaults.isSenderCode(fault.getFaultCode())) {
            return new RefusedException("refused", fault.getMessage(), fault);
        }
        return new RemoteInvocationException(fault.getMessage(), fault.getFaultCode() == null ? null
                : fault.getFaultCode().getLocalPart(), fault);
    }

    /** Axis2 reports a non-SOAP HTTP answer only in its message: "Transport error: 413 Error: ...". */
    private static int httpStatus(AxisFault fault) {
        String m = fault.getMessage();
        String prefix = "Transport error: ";
        if (m != null && m.startsWith(prefix) && m.length() >= prefix.length() + 3) {
            try {
                return Integer.parseInt(m.substring(prefix.length(), prefix.length() + 3));
            } catch (NumberFormatException ignored) {
                return -1;
            }
        }
        return -1;
    }

    private static Throwable ioCause(Throwable t) {
        for (Throwable c = t; c != null; c = c.getCause() == c ? null : c.getCause()) {
            // AxisFault is itself an IOException (through RemoteException): look beneath it
            if (c instanceof IOException && !(c instanceof AxisFault)) {
                return c;
            }
        }
        return null;
    }

    @Override
    public void close() {
        // the SoapClient owns connections; a transport holds none of its own
    }

    @Override
    public String toString() {
        return "SoapTransport[" + descriptor.name() + " at " + endpoint.address() + "]";
    }

    /**
     * A denial sent as a refusal detail ({@code <sb:refused reason="permission-denied" path=.../>}
     * under the fault code {@code sb:PermissionDenied}): the Python server's form, read as the
     * Python client reads it, so that a denial is never taken for a refusal to retry elsewhere.
     */
    private static boolean deniedAsRefusal(OMElement detail) {
        if (!SoapFaults.REFUSED.equals(detail.getQName())) {
            return false;
        }
        String reason = detail.getAttributeValue(new javax.xml.namespace.QName("reason"));
        return io.switchboard.protocol.PermissionDeniedException.DENIED.equals(reason)
                || io.switchboard.protocol.PermissionDeniedException.UNAUTHENTICATED.equals(reason);
    }
}
