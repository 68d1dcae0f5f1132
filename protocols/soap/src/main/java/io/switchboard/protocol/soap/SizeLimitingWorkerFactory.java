package io.switchboard.protocol.soap;

import io.switchboard.protocol.spi.PhaseMarks;
import java.io.InputStream;
import java.lang.reflect.InvocationTargetException;
import java.lang.reflect.Proxy;
import org.apache.axiom.om.OMException;
import org.apache.axis2.AxisFault;
import org.apache.axis2.transport.http.HTTPWorker;
import org.apache.axis2.transport.http.server.AxisHttpRequest;
import org.apache.axis2.transport.http.server.Worker;
import org.apache.axis2.transport.http.server.WorkerFactory;
import org.apache.hc.core5.http.Header;

/**
 * WorkerFactory for SimpleHTTPServer (passed via HttpFactory) that enforces a maximum request body size
 * before Axis2/Axiom touch the body:
 *  - Content-Length > limit: rejected immediately (SOAP Fault + HTTP 413), body not parsed;
 *  - chunked / no Content-Length: the request InputStream is wrapped in a counting stream that throws
 *    RequestTooLargeException once the limit is crossed (the receiver maps it to the same fault);
 *  - Content-Encoding other than identity: rejected (Axis2 would otherwise gunzip after our limit -> zip bomb).
 * Everything else is delegated to the stock HTTPWorker (?wsdl, POST dispatch, ...).
 */
public final class SizeLimitingWorkerFactory implements WorkerFactory {
    private final long maxRequestBytes;

    public SizeLimitingWorkerFactory(long maxRequestBytes) {
        this.maxRequestBytes = maxRequestBytes;
    }

    @Override
    public Worker newWorker() {
        HTTPWorker delegate = new HTTPWorker();
        return (request, response, msgContext) -> {
            PhaseMarks.mark(PhaseMarks.Phase.ARRIVED);
            if (!"GET".equals(request.getMethod())) {
                Header ce = request.getFirstHeader("Content-Encoding");
                if (ce != null && !"identity".equalsIgnoreCase(ce.getValue().trim())) {
                    msgContext.setProperty(org.apache.axis2.Constants.HTTP_RESPONSE_STATE, "415");
                    throw new AxisFault("Content-Encoding '" + ce.getValue() + "' is not accepted",
                            SoapFaults.senderCode(null));
                }
                Header cl = request.getFirstHeader("Content-Length");
                if (cl != null) {
                    long len;
                    try {
                        len = Long.parseLong(cl.getValue().trim());
                    } catch (NumberFormatException e) {
                        len = -1;
                    }
                    if (len > maxRequestBytes) {
                        throw new RequestTooLargeException("Request body of " + len
                                + " bytes (Content-Length) exceeds the limit of " + maxRequestBytes + " bytes",
                                maxRequestBytes).toAxisFault(msgContext);
                    }
                }
                request = limited(request, maxRequestBytes);
            }
            try {
                delegate.service(request, response, msgContext);
            } catch (AxisFault | OMException e) {
                throw parserLimitAsRefusal(e, msgContext);
            }
        };
    }

    /**
     * Axis2 parses the Header while it dispatches, before any receiver of ours: the parser's limits
     * (element depth, attributes per element) and broken markup there would come back as a Server
     * fault. They are the sender's fault: a {@code malformed} refusal (HTTP 400).
     */
    private static AxisFault parserLimitAsRefusal(Exception e, org.apache.axis2.context.MessageContext mc) {
        for (Throwable c = e; c != null; c = c.getCause() == c ? null : c.getCause()) {
            if (c instanceof RequestTooLargeException) {
                return e instanceof AxisFault fault ? fault : AxisFault.makeFault(e);
            }
            if (c instanceof javax.xml.stream.XMLStreamException) {
                return SkeletonMessageReceiver.refused(mc, "malformed", "cannot parse the request: "
                        + SoapFaults.rootMessage(e));
            }
        }
        return e instanceof AxisFault fault ? fault : AxisFault.makeFault(e);
    }

    private static AxisHttpRequest limited(AxisHttpRequest req, long limit) {
        InputStream limitedIn = new LimitedInputStream(req.getInputStream(), limit);
        return (AxisHttpRequest) Proxy.newProxyInstance(AxisHttpRequest.class.getClassLoader(),
                new Class<?>[] {AxisHttpRequest.class}, (proxy, m, args) -> {
                    if (m.getName().equals("getInputStream") && m.getParameterCount() == 0) {
                        return limitedIn;
                    }
                    try {
                        return m.invoke(req, args);
                    } catch (InvocationTargetException e) {
                        throw e.getCause();
                    }
                });
    }
}
