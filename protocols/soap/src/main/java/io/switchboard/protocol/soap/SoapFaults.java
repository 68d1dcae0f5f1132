package io.switchboard.protocol.soap;

import javax.xml.namespace.QName;
import org.apache.axiom.soap.SOAP11Constants;
import org.apache.axiom.soap.SOAP12Constants;
import org.apache.axis2.AxisFault;
import org.apache.axis2.context.MessageContext;

/**
 * Fault codes, the one convention both sides share: {@code Client}/{@code Sender} means the
 * request was refused before the operation ran (malformed, too large, unknown operation);
 * {@code Server}/{@code Receiver} means the operation ran and failed. A declared fault is a
 * {@code Server} fault whose detail is the operation's fault element.
 */
final class SoapFaults {
    /** Namespace of the detail element that names why a request was refused. */
    static final String NS = "urn:switchboard:soap";
    static final QName REFUSED = new QName(NS, "refused");
    /**
     * The detail of a call refused because of who made it:
     * {@code <sb:PermissionDenied reason="permission-denied|unauthenticated" path="/pkg.Service/op"/>}
     * in a {@code Client}/{@code Sender} fault.
     */
    static final QName PERMISSION_DENIED = new QName(NS, "PermissionDenied");
    /** SOAP header carrying the call id: {@code <sb:call id="..."/>}. */
    static final QName CALL_HEADER = new QName(NS, "call");
    /** SOAP header carrying the W3C trace context: {@code <sb:trace traceparent="..." tracestate="..."/>}. */
    static final QName TRACE_HEADER = new QName(NS, "trace");
    /** SOAP header carrying the time the caller has left: {@code <sb:deadline timeout-ms="..."/>}. */
    static final QName DEADLINE_HEADER = new QName(NS, "deadline");

    private SoapFaults() {
    }

    static QName senderCode(MessageContext mc) {
        return isSoap12(mc) ? SOAP12Constants.QNAME_SENDER_FAULTCODE : SOAP11Constants.QNAME_SENDER_FAULTCODE;
    }

    static QName receiverCode(MessageContext mc) {
        return isSoap12(mc) ? SOAP12Constants.QNAME_RECEIVER_FAULTCODE : SOAP11Constants.QNAME_RECEIVER_FAULTCODE;
    }

    static boolean isSenderCode(QName code) {
        return code != null && ("Client".equals(code.getLocalPart()) || "Sender".equals(code.getLocalPart()));
    }

    /**
     * The HTTP status of a fault answer: 500, which WS-I Basic Profile 1.1 (R1126) asks for every
     * SOAP 1.1 fault, the sender's included (a client such as CXF reads the fault of a 500 only, by
     * default); 400 for a SOAP 1.2 {@code Sender} fault, as SOAP 1.2's HTTP binding asks.
     */
    static int httpStatusOf(AxisFault fault, MessageContext mc) {
        return isSoap12(mc) && isSenderCode(fault.getFaultCode()) ? 400 : 500;
    }

    private static boolean isSoap12(MessageContext mc) {
        return mc != null && mc.getEnvelope() != null && !mc.isSOAP11();
    }

    /**
     * The HTTP status that a Jetty exception in the cause chain carries, or -1: a body read past the
     * server's size limit fails with 413.
     */
    static int httpStatus(Throwable t) {
        for (Throwable c = t; c != null; c = c.getCause() == c ? null : c.getCause()) {
            if (c instanceof org.eclipse.jetty.http.HttpException h) {
                return h.getCode();
            }
        }
        return -1;
    }

    static String rootMessage(Throwable t) {
        Throwable c = t;
        while (c.getCause() != null && c.getCause() != c) {
            c = c.getCause();
        }
        return c.getMessage() != null ? c.getMessage() : c.toString();
    }
}
