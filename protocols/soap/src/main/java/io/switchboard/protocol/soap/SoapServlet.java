package io.switchboard.protocol.soap;

import io.switchboard.protocol.spi.PhaseMarks;
import jakarta.servlet.ServletConfig;
import jakarta.servlet.ServletInputStream;
import jakarta.servlet.http.HttpServletRequest;
import jakarta.servlet.http.HttpServletResponse;
import jakarta.servlet.http.HttpServletResponseWrapper;
import java.io.IOException;
import java.io.OutputStream;
import java.util.Arrays;
import javax.xml.stream.XMLStreamException;
import org.apache.axiom.om.OMXMLParserWrapper;
import org.apache.axiom.soap.SOAPEnvelope;
import org.apache.axis2.AxisFault;
import org.apache.axis2.Constants;
import org.apache.axis2.context.ConfigurationContext;
import org.apache.axis2.context.MessageContext;
import org.apache.axis2.engine.AxisEngine;
import org.apache.axis2.engine.Handler.InvocationResponse;
import org.apache.axis2.kernel.RequestResponseTransport;
import org.apache.axis2.kernel.TransportUtils;
import org.apache.axis2.transport.http.AxisServlet;
import org.apache.axis2.transport.http.HTTPTransportUtils;
import org.apache.axis2.transport.http.ServletBasedOutTransportInfo;
import org.apache.axis2.util.MessageContextBuilder;
import org.eclipse.jetty.ee10.servlet.ServletContextRequest;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Axis2's servlet on the server's own configuration, with its POST path written again: Axis2's
 * answers a fault carrying an HTTP status with that status and no body, and a SOAP 1.1
 * {@code Client} fault with 500. This one answers as Axis2's embedded server did, so the wire form
 * stays: the fault's status (413, 415) or 400 for a sender's fault, 500 otherwise, always with the
 * fault. Before Axis2 reads the body, a compressed one is refused (Axis2 would inflate it past the
 * size limit). GET ({@code ?wsdl}) is Axis2's own.
 */
final class SoapServlet extends AxisServlet {
    private static final long serialVersionUID = 1L;
    private static final Logger LOG = LoggerFactory.getLogger(SoapServlet.class);
    /** Answers up to this size are sent whole, in one write with their length. */
    private static final int WHOLE_ANSWER = 64 * 1024;

    private final transient ConfigurationContext context;
    private final long maxMessageBytes;

    SoapServlet(ConfigurationContext context, long maxMessageBytes) {
        this.context = context;
        this.maxMessageBytes = maxMessageBytes;
    }

    @Override
    protected ConfigurationContext initConfigContext(ServletConfig config) {
        return context;
    }

    @Override
    protected void doPost(HttpServletRequest request, HttpServletResponse response) throws IOException {
        PhaseMarks.mark(PhaseMarks.Phase.ARRIVED);
        initContextRoot(request);
        MessageContext mc = createMessageContext(request, response);
        String contentType = request.getContentType();
        mc.setProperty(Constants.Configuration.CONTENT_TYPE, contentType);
        Answer out = new Answer(response);
        try {
            String encoding = request.getHeader("Content-Encoding");
            if (encoding != null && !"identity".equalsIgnoreCase(encoding.trim())) {
                mc.setProperty(Constants.HTTP_RESPONSE_STATE, "415");
                throw new AxisFault("Content-Encoding '" + encoding + "' is not accepted", SoapFaults.senderCode(null));
            }
            InvocationResponse pi = HTTPTransportUtils.processHTTPPostRequest(mc, request.getInputStream(), out,
                    contentType, request.getHeader("SOAPAction"), request.getRequestURL().toString());
            RequestResponseTransport transport =
                    (RequestResponseTransport) mc.getProperty(RequestResponseTransport.TRANSPORT_CONTROL);
            if (pi.equals(InvocationResponse.SUSPEND)
                    || Boolean.TRUE.equals(mc.getProperty(RequestResponseTransport.HOLD_RESPONSE))) {
                transport.awaitResponse();
            }
            if (!TransportUtils.isResponseWritten(mc)
                    && transport.getStatus() != RequestResponseTransport.RequestResponseTransportStatus.SIGNALLED) {
                response.setStatus(HttpServletResponse.SC_ACCEPTED);   // a one-way operation
            }
        } catch (AxisFault | RuntimeException e) {
            sendFault(mc, request, response, out, e);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            sendFault(mc, request, response, out, e);
        } finally {
            closeBuilder(mc);
            TransportUtils.deleteAttachments(mc);
            out.send();
            readToEnd(request);
        }
    }

    /**
     * The answer as Axis2 writes it: kept whole up to {@value #WHOLE_ANSWER} bytes and sent in one
     * write with its length, before the rest of the request is read, as Axis2's embedded server did.
     * Axis2's client sends a request's last chunk a moment after its body: an answer held until it
     * arrived would wait for it, and a larger one, or one Axis2 flushed, would go out in chunks.
     * A larger answer streams through Jetty's buffer.
     */
    private static final class Answer extends OutputStream {
        private final HttpServletResponse response;
        private OutputStream stream;
        private byte[] buf = new byte[4096];
        private int count;

        Answer(HttpServletResponse response) {
            this.response = response;
        }

        @Override
        public void write(int b) throws IOException {
            write(new byte[] {(byte) b}, 0, 1);
        }

        @Override
        public void write(byte[] b, int off, int len) throws IOException {
            if (stream != null) {
                stream.write(b, off, len);
            } else if (count + len <= WHOLE_ANSWER) {
                if (count + len > buf.length) {
                    buf = Arrays.copyOf(buf, Math.min(WHOLE_ANSWER, Math.max(count + len, 2 * buf.length)));
                }
                System.arraycopy(b, off, buf, count, len);
                count += len;
            } else {
                stream = response.getOutputStream();
                stream.write(buf, 0, count);
                stream.write(b, off, len);
            }
        }

        /** Axis2 flushes as it ends a message: the answer is sent whole by {@link #send} instead. */
        @Override
        public void flush() {
        }

        /** Sends what is kept (with its length), or ends the streamed answer. */
        void send() {
            try {
                if (stream == null) {
                    response.setContentLength(count);
                    if (count > 0) {
                        response.getOutputStream().write(buf, 0, count);
                    }
                    response.flushBuffer();
                } else {
                    stream.flush();
                }
            } catch (IOException | RuntimeException e) {
                LOG.debug("sending the answer", e);
            }
        }
    }

    /**
     * Reads what Axis2 left of the request (the envelope's end, the last chunk): Jetty keeps a
     * connection for the next request only when the last one was read whole, and closes it otherwise,
     * which a client about to reuse it would meet as a broken pipe. The read is bounded by the size
     * limit and the request deadline; past the limit it fails, and the connection ends.
     */
    private static void readToEnd(HttpServletRequest request) {
        try {
            ServletInputStream in = request.getInputStream();
            if (!in.isFinished()) {
                byte[] sink = new byte[256];   // mostly the envelope's end tags and the last chunk
                while (in.read(sink) >= 0) {
                    // dropped
                }
            }
        } catch (IOException | RuntimeException e) {
            LOG.debug("reading the rest of the request", e);
        }
    }

    private void sendFault(MessageContext mc, HttpServletRequest request, HttpServletResponse response,
                           OutputStream out, Exception e) {
        AxisFault fault = asRefusal(e, mc, request);
        LOG.debug("SOAP fault", fault);
        String state = (String) mc.getProperty(Constants.HTTP_RESPONSE_STATE);
        response.setStatus(state != null ? Integer.parseInt(state)
                : SoapFaults.isSenderCode(fault.getFaultCode()) ? HttpServletResponse.SC_BAD_REQUEST
                : HttpServletResponse.SC_INTERNAL_SERVER_ERROR);
        try {
            MessageContext faultContext = MessageContextBuilder.createFaultMessageContext(mc, fault);
            faultContext.setProperty(MessageContext.TRANSPORT_OUT, out);
            // Axis2's HTTP sender sets 500 on every fault it writes through a servlet: the status is ours
            faultContext.setProperty(Constants.OUT_TRANSPORT_INFO, new ServletBasedOutTransportInfo(
                    new HttpServletResponseWrapper(response) {
                        @Override
                        public void setStatus(int status) {
                        }
                    }));
            AxisEngine.sendFault(faultContext);
        } catch (AxisFault | RuntimeException f) {
            LOG.debug("cannot send the fault", f);
        }
    }

    /**
     * A body that Jetty's size limit stopped is a 413; a request the parser refused (broken markup,
     * or its depth or attribute limits, met while Axis2 reads the Header before any receiver of
     * ours) is the sender's fault, a {@code malformed} refusal (400), not a Server fault.
     */
    private AxisFault asRefusal(Exception e, MessageContext mc, HttpServletRequest request) {
        if (SoapFaults.httpStatus(e) == 413) {
            mc.setProperty(Constants.HTTP_RESPONSE_STATE, "413");
            SoapEndPoint endPoint = SoapConnector.endPointOf(ServletContextRequest.getServletContextRequest(request));
            if (endPoint != null) {
                endPoint.lingerAtClose();   // the unread body ends the connection: its sender may still be sending
            }
            return new AxisFault("Request body exceeds the limit of " + maxMessageBytes + " bytes",
                    SoapFaults.senderCode(mc), e);
        }
        for (Throwable c = e; c != null; c = c.getCause() == c ? null : c.getCause()) {
            if (c instanceof XMLStreamException) {
                return SkeletonMessageReceiver.refused(mc, "malformed", "cannot parse the request: "
                        + SoapFaults.rootMessage(e));
            }
        }
        return e instanceof AxisFault fault ? fault : AxisFault.makeFault(e);
    }

    private static void closeBuilder(MessageContext mc) {
        try {
            SOAPEnvelope envelope = mc.getEnvelope();
            OMXMLParserWrapper builder = envelope == null ? null : envelope.getBuilder();
            if (builder != null) {
                builder.close();
            }
        } catch (RuntimeException e) {
            LOG.debug("closing the request's parser", e);
        }
    }
}
