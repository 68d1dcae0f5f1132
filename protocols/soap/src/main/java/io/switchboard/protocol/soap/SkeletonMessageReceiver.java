package io.switchboard.protocol.soap;

import io.switchboard.idl.runtime.DeclaredFault;
import io.switchboard.codec.Graphs;
import io.switchboard.codec.MalformedXmlException;
import io.switchboard.idl.runtime.OperationDescriptor;
import io.switchboard.codec.XmlCodec;
import io.switchboard.codec.message.WireFormatException;
import io.switchboard.protocol.spi.PhaseMarks;
import io.switchboard.protocol.ServerCallContext;
import io.switchboard.protocol.Skeleton;
import io.switchboard.protocol.TokenVerifier;
import io.switchboard.protocol.TraceContext;
import io.switchboard.protocol.spi.CallerIdentity;
import jakarta.xml.bind.JAXBException;
import javax.xml.stream.XMLStreamReader;
import org.apache.axiom.om.OMAbstractFactory;
import org.apache.axiom.om.OMElement;
import org.apache.axiom.om.OMFactory;
import org.apache.axiom.soap.SOAPEnvelope;
import org.apache.axiom.soap.SOAPFactory;
import org.apache.axis2.AxisFault;
import org.apache.axis2.context.MessageContext;
import org.apache.axis2.receivers.AbstractInOutMessageReceiver;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Runs one operation of a skeleton for Axis2: reads the request body strictly, calls the
 * skeleton, writes the response (or the declared fault) back. One instance per operation.
 */
final class SkeletonMessageReceiver extends AbstractInOutMessageReceiver {
    private static final Logger LOG = LoggerFactory.getLogger(SkeletonMessageReceiver.class);

    private final Skeleton skeleton;
    private final OperationDescriptor operation;
    private final XmlCodec xml;
    private final SoapCalls calls;
    private final TokenVerifier tokens;
    /** The server's TLS (null: plain text): a call's connection whose client it no longer trusts is refused. */
    private final io.switchboard.protocol.TlsSettings tls;

    SkeletonMessageReceiver(Skeleton skeleton, OperationDescriptor operation, XmlCodec xml, SoapCalls calls,
                            TokenVerifier tokens, io.switchboard.protocol.TlsSettings tls) {
        this.tokens = tokens;
        this.tls = tls;
        this.skeleton = skeleton;
        this.operation = operation;
        this.xml = xml;
        this.calls = calls;
    }

    @Override
    public void invokeBusinessLogic(MessageContext in, MessageContext out) throws AxisFault {
        Object response = run(in);
        try {
            xml.check(response);   // before Axis2 starts the HTTP answer: a refusal mid-stream would read as a broken connection
        } catch (WireFormatException e) {
            throw new AxisFault("the response of " + operation + " cannot be sent: " + e.getMessage(),
                    SoapFaults.receiverCode(in));
        }
        SOAPFactory f = getSOAPFactory(in);
        SOAPEnvelope env = f.getDefaultEnvelope();
        env.getBody().addChild(f.createOMElement(new MessageDataSource(xml, response)));
        out.setEnvelope(env);
    }

    /** Used for one-way operations too: they have no response to write. */
    Object run(MessageContext in) throws AxisFault {
        String callId;
        Object request;
        Long deadline;
        try {
            callId = callId(in);
            deadline = deadline(in);
            request = readRequest(in);
            if (deadline != null && deadline - System.nanoTime() <= 0) {
                throw refused(in, "deadline-exceeded", "the caller's deadline passed before " + operation
                        + " could start; it did not run");
            }
        } catch (AxisFault refusal) {
            skeleton.refused(operation, refusalReason(refusal));
            throw refusal;
        }
        CallerIdentity caller = SoapCallers.of(in, tokens, tls);
        ServerCallContext call = ServerCallContext.create(deadline, trace(in), caller.peer()).cancelAtDeadline()
                .trustedBy(tls, tls == null ? null : SoapCallers.session(in));
        String component = in.getAxisService() != null ? in.getAxisService().getName() : operation.service().name();
        Object response;
        try (ServerCallContext.Scope scope = call.enter()) {
            caller.checkVerified();   // a token that did not verify: the operation does not run
            ServerCallContext.Scope cancellable = calls.running(component, callId, call);
            if (cancellable == null) {
                skeleton.refused(operation, SoapCalls.CANCELLED);
                throw refused(in, SoapCalls.CANCELLED, "the caller cancelled call " + callId + " before it arrived; "
                        + operation + " did not run");
            }
            try (cancellable; ServerCallContext.Scope watched = watched(in, call)) {
                response = skeleton.invoke(operation, request, callId);
            }
        } catch (DeclaredFault fault) {
            try {
                xml.check(fault.faultInfo());
            } catch (WireFormatException e) {
                throw new AxisFault("the declared fault of " + operation + " cannot be sent: " + e.getMessage(),
                        SoapFaults.receiverCode(in));
            }
            OMFactory f = OMAbstractFactory.getOMFactory();
            OMElement detail = f.createOMElement(new MessageDataSource(xml, fault.faultInfo()));
            throw new AxisFault(SoapFaults.receiverCode(in), fault.getMessage(), null, null, detail);
        } catch (io.switchboard.protocol.DrainingException e) {
            throw refused(in, io.switchboard.protocol.DrainingException.REASON, e.getMessage());
        } catch (io.switchboard.protocol.PermissionDeniedException e) {
            throw denied(in, e);
        } catch (io.switchboard.protocol.RefusedException e) {
            // a step of the server's chain refused the call before it ran (a reused call id, say)
            throw refused(in, e.reason() != null ? e.reason() : "refused", e.field(), e.getMessage());
        } catch (RuntimeException e) {
            LOG.debug("{} failed", operation, e);
            String message = e.getMessage() != null ? e.getMessage() : e.getClass().getName();
            throw new AxisFault(message, SoapFaults.receiverCode(in));
        }
        if (call.expired()) {
            // past its deadline a call fails, whichever end sees it first: the caller's own timer
            // may not have run yet on a busy machine, and must not get a result after it
            throw new AxisFault("the caller's deadline passed while " + operation + " ran; its result was not sent",
                    SoapFaults.receiverCode(in));
        }
        return response;
    }

    /** While the operation runs, a client that closes its connection cancels the call ({@link SoapEndPoint#checkClientGone}). */
    private static ServerCallContext.Scope watched(MessageContext in, ServerCallContext call) {
        if (!(in.getProperty(SoapEndPoint.PROPERTY) instanceof SoapEndPoint e)) {
            return () -> { };
        }
        if (in.getProperty(SoapEndPoint.BODY_END) instanceof Runnable readEnd) {
            readEnd.run();   // the operation has its request: the body's end, if it came, is read now
        }
        return e.running(call);
    }

    /** The call id from the {@code sb:call} header, or null when the client sent none. */
    private static String callId(MessageContext in) throws AxisFault {
        org.apache.axiom.soap.SOAPHeader header = in.getEnvelope().getHeader();
        if (header == null) {
            return null;
        }
        OMElement call = header.getFirstChildWithName(SoapFaults.CALL_HEADER);
        if (call == null) {
            return null;
        }
        String id = call.getAttributeValue(new javax.xml.namespace.QName("id"));
        if (!io.switchboard.protocol.CallIds.wellFormed(id)) {
            throw refused(in, "malformed", "the sb:call header's id is malformed: " + io.switchboard.protocol.CallIds.rule());
        }
        return id;
    }

    /**
     * The deadline from the {@code sb:deadline} header ({@code <sb:deadline timeout-ms="..."/>}, the
     * time the caller had left when it sent the call), counted from the request's arrival; null
     * when the client sent none.
     */
    private static Long deadline(MessageContext in) throws AxisFault {
        org.apache.axiom.soap.SOAPHeader header = in.getEnvelope().getHeader();
        OMElement deadline = header == null ? null : header.getFirstChildWithName(SoapFaults.DEADLINE_HEADER);
        if (deadline == null) {
            return null;
        }
        long millis;
        try {
            millis = Long.parseLong(deadline.getAttributeValue(new javax.xml.namespace.QName("timeout-ms")));
        } catch (NumberFormatException e) {
            millis = -1;
        }
        if (millis < 0 || millis > Integer.MAX_VALUE) {
            throw refused(in, "malformed", "the sb:deadline header needs a timeout-ms of 0 to " + Integer.MAX_VALUE);
        }
        Object arrived = in.getProperty(SoapCalls.ARRIVED);
        long from = arrived instanceof Long a ? a : System.nanoTime();
        return from + java.util.concurrent.TimeUnit.MILLISECONDS.toNanos(millis);
    }

    /**
     * The trace context from the {@code sb:trace} header, or null when there is none or it is
     * malformed: tracing never refuses a call.
     */
    private static TraceContext trace(MessageContext in) {
        org.apache.axiom.soap.SOAPHeader header = in.getEnvelope().getHeader();
        if (header == null) {
            return null;
        }
        OMElement trace = header.getFirstChildWithName(SoapFaults.TRACE_HEADER);
        if (trace == null) {
            return null;
        }
        return TraceContext.of(trace.getAttributeValue(new javax.xml.namespace.QName(TraceContext.TRACEPARENT)),
                trace.getAttributeValue(new javax.xml.namespace.QName(TraceContext.TRACESTATE)));
    }

    private Object readRequest(MessageContext in) throws AxisFault {
        OMElement body = in.getEnvelope().getBody().getFirstElement();
        if (body == null) {
            throw refused(in, "malformed", "the SOAP Body is empty");
        }
        if (!operation.requestElement().equals(body.getQName())) {
            throw refused(in, "unknown-operation", "operation " + operation.name() + " expects element "
                    + operation.requestElement() + ", got " + body.getQName());
        }
        try {
            PhaseMarks.mark(PhaseMarks.Phase.DECODE_START);
            XMLStreamReader reader = body.getXMLStreamReaderWithoutCaching();
            Object request = xml.read(reader, operation.requestClass());
            PhaseMarks.mark(PhaseMarks.Phase.DECODE_END);
            return request;
        } catch (JAXBException | RuntimeException e) {
            if (SoapFaults.httpStatus(e) == 413) {   // the body went past the size limit: SoapPostHandler answers 413
                throw AxisFault.makeFault(e);
            }
            if (e instanceof Graphs.GraphLimitException) {
                throw refused(in, "node-limit", e.getMessage());
            }
            if (e instanceof MalformedXmlException m) {
                throw refused(in, "malformed", m.path(), "cannot read " + body.getQName().getLocalPart() + ": "
                        + m.getMessage());
            }
            for (Throwable c = e; c != null; c = c.getCause()) {
                if (c instanceof io.switchboard.codec.XmlMessages.ListDepthException) {
                    throw refused(in, "depth-limit", c.getMessage());
                }
            }
            throw refused(in, "malformed", "cannot read " + body.getQName().getLocalPart() + ": "
                    + SoapFaults.rootMessage(e));
        }
    }

    /** The code of a refusal made here ({@code <sb:refused reason=.../>}); {@code size-limit} for the 413. */
    private static String refusalReason(AxisFault refusal) {
        OMElement detail = refusal.getDetail();
        String reason = detail == null ? null : detail.getAttributeValue(new javax.xml.namespace.QName("reason"));
        return reason != null ? reason : SoapFaults.httpStatus(refusal) == 413 ? "size-limit" : "malformed";
    }

    static AxisFault refused(MessageContext in, String reason, String message) {
        return refused(in, reason, null, message);
    }

    /** A call refused because of who made it, as a {@code Client}/{@code Sender} fault with an {@code sb:PermissionDenied} detail. */
    static AxisFault denied(MessageContext in, io.switchboard.protocol.PermissionDeniedException e) {
        OMFactory f = OMAbstractFactory.getOMFactory();
        OMElement detail = f.createOMElement(SoapFaults.PERMISSION_DENIED);
        detail.addAttribute("reason", e.reason(), null);
        if (e.path() != null) {
            detail.addAttribute("path", e.path(), null);
        }
        return new AxisFault(SoapFaults.senderCode(in), e.getMessage(), null, null, detail);
    }

    /**
     * A refusal as a {@code Client}/{@code Sender} fault whose detail is
     * {@code <sb:refused reason="..." field="..."/>}; {@code field} (the element's path in the
     * message) is left out when null.
     */
    static AxisFault refused(MessageContext in, String reason, String field, String message) {
        OMFactory f = OMAbstractFactory.getOMFactory();
        OMElement detail = f.createOMElement(SoapFaults.REFUSED);
        detail.addAttribute("reason", reason, null);
        if (field != null) {
            detail.addAttribute("field", field, null);
        }
        return new AxisFault(SoapFaults.senderCode(in), message, null, null, detail);
    }
}
