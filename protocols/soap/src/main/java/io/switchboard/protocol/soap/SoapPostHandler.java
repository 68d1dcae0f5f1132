package io.switchboard.protocol.soap;

import io.switchboard.protocol.spi.PhaseMarks;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.nio.ByteBuffer;
import java.util.Arrays;
import java.util.concurrent.CountDownLatch;
import javax.xml.stream.XMLStreamException;
import org.apache.axiom.om.OMXMLParserWrapper;
import org.apache.axiom.soap.SOAPEnvelope;
import org.apache.axis2.AxisFault;
import org.apache.axis2.Constants;
import org.apache.axis2.addressing.EndpointReference;
import org.apache.axis2.context.ConfigurationContext;
import io.switchboard.protocol.spi.CallerIdentity;
import org.apache.axis2.context.MessageContext;
import org.apache.axis2.description.TransportOutDescription;
import org.apache.axis2.engine.AxisConfiguration;
import org.apache.axis2.engine.AxisEngine;
import org.apache.axis2.engine.Handler.InvocationResponse;
import org.apache.axis2.kernel.RequestResponseTransport;
import org.apache.axis2.kernel.TransportUtils;
import org.apache.axis2.transport.http.HTTPTransportUtils;
import org.apache.axis2.transport.http.ServletBasedOutTransportInfo;
import org.apache.axis2.util.MessageContextBuilder;
import org.eclipse.jetty.http.HttpHeader;
import org.eclipse.jetty.http.HttpMethod;
import org.eclipse.jetty.http.HttpStatus;
import org.eclipse.jetty.http.HttpURI;
import org.eclipse.jetty.io.Content;
import org.eclipse.jetty.server.Handler;
import org.eclipse.jetty.server.Request;
import org.eclipse.jetty.server.Response;
import org.eclipse.jetty.util.Blocker;
import org.eclipse.jetty.util.Callback;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Serves a SOAP POST to {@code /axis2/services/NAME} straight from Jetty's request into Axis2's
 * engine ({@link HTTPTransportUtils#processHTTPPostRequest}), without the servlet layers; anything
 * else (GET {@code ?wsdl}) goes on to Axis2's servlet ({@link SoapServlet}). A small call spent a
 * fifth of its time in those layers (docs/benchmarks/soap-jetty.md).
 *
 * <p>A fault's status: 413 or 415 for a body refused as such, otherwise 500, as WS-I Basic Profile
 * 1.1 (R1126) asks of SOAP 1.1 and SOAP 1.2's HTTP binding of a {@code Receiver} fault, and 400 for
 * a SOAP 1.2 {@code Sender} fault, as that binding asks; always with the fault. 202 for a one-way
 * operation. Before Axis2 reads the body, a compressed one is refused (Axis2 would inflate it past
 * the size limit).
 */
final class SoapPostHandler extends Handler.Wrapper {
    private static final Logger LOG = LoggerFactory.getLogger(SoapPostHandler.class);
    private static final String SERVICES = "/axis2/services";
    /** Answers up to this size are sent whole, in one write with their length. */
    private static final int WHOLE_ANSWER = 64 * 1024;

    private final ConfigurationContext context;
    private final AxisConfiguration axis;
    private final long maxMessageBytes;
    private final SoapCalls calls;
    /** Checks a cancel's bearer token as the call's own would be; null: tokens are not verified. */
    private final io.switchboard.protocol.TokenVerifier tokens;
    /** Whether a call goes straight into Axis2's engine ({@link LibraryInternals#directAxis2}), or to the servlet behind. */
    private final boolean direct;

    SoapPostHandler(ConfigurationContext context, long maxMessageBytes, SoapCalls calls,
                    io.switchboard.protocol.TokenVerifier tokens, boolean direct, Handler next) {
        super(next);
        this.direct = direct;
        this.calls = calls;
        this.tokens = tokens;
        this.context = context;
        this.axis = context.getAxisConfiguration();
        this.maxMessageBytes = maxMessageBytes;
    }

    @Override
    public boolean handle(Request request, Response response, Callback callback) throws Exception {
        if (!HttpMethod.POST.is(request.getMethod()) || !request.getHttpURI().getPath().startsWith(SERVICES)) {
            return super.handle(request, response, callback);
        }
        long arrived = System.nanoTime();
        PhaseMarks.mark(PhaseMarks.Phase.ARRIVED);
        String cancel = request.getHeaders().get(SoapCalls.CANCEL_HEADER);
        if (cancel != null) {
            cancel(request, response, callback, cancel);
            return true;
        }
        if (!direct) {
            return super.handle(request, response, callback);   // Axis2's servlet: the public path
        }
        String contentType = request.getHeaders().get(HttpHeader.CONTENT_TYPE);
        InputStream in = Content.Source.asInputStream(body(request));
        Answer out = new Answer(response);
        MessageContext mc = messageContext(request, out);
        mc.setProperty(SoapEndPoint.BODY_END, (Runnable) () -> readArrivedEnd(request));
        mc.setProperty(Constants.Configuration.CONTENT_TYPE, contentType);
        mc.setProperty(SoapCalls.ARRIVED, arrived);
        try {
            String encoding = request.getHeaders().get(HttpHeader.CONTENT_ENCODING);
            if (encoding != null && !"identity".equalsIgnoreCase(encoding.trim())) {
                mc.setProperty(Constants.HTTP_RESPONSE_STATE, "415");
                throw new AxisFault("Content-Encoding '" + encoding + "' is not accepted", SoapFaults.senderCode(null));
            }
            InvocationResponse pi = HTTPTransportUtils.processHTTPPostRequest(mc, in, out, contentType,
                    request.getHeaders().get("SOAPAction"), address(request));
            ResponseSignal transport = (ResponseSignal) mc.getProperty(RequestResponseTransport.TRANSPORT_CONTROL);
            if (pi.equals(InvocationResponse.SUSPEND)
                    || Boolean.TRUE.equals(mc.getProperty(RequestResponseTransport.HOLD_RESPONSE))) {
                transport.awaitResponse();
            }
            if (!TransportUtils.isResponseWritten(mc)
                    && transport.getStatus() != RequestResponseTransport.RequestResponseTransportStatus.SIGNALLED) {
                response.setStatus(HttpStatus.ACCEPTED_202);   // a one-way operation
            }
        } catch (AxisFault | RuntimeException e) {
            sendFault(mc, request, response, out, e);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            sendFault(mc, request, response, out, e);
        } finally {
            closeBuilder(mc);
            TransportUtils.deleteAttachments(mc);
            try {
                out.send();
                readToEnd(in);
                callback.succeeded();
            } catch (Throwable t) {
                callback.failed(t);
            }
        }
        return true;
    }

    /**
     * A client's cancel message: {@code 204} when the call named ran here and is cancelled now,
     * {@code 202} when none of that id and caller runs (it has not come yet, or it ended) and the
     * cancel is kept for it ({@link SoapCalls}), {@code 404} for a malformed id, a token that does
     * not verify, or a cancel of a running call only that found none.
     */
    private void cancel(Request request, Response response, Callback callback, String callId) {
        String path = request.getHttpURI().getPath();
        String component = path.substring(path.lastIndexOf('/') + 1);
        io.switchboard.protocol.Peer caller = peer(request);
        SoapCalls.Outcome outcome = caller == null || !io.switchboard.protocol.CallIds.wellFormed(callId)
                ? SoapCalls.Outcome.NOT_FOUND
                : calls.cancel(component, callId, caller, request.getHeaders().contains(SoapCalls.RUNNING_ONLY_HEADER));
        response.setStatus(switch (outcome) {
            case CANCELLED -> HttpStatus.NO_CONTENT_204;
            case REMEMBERED -> HttpStatus.ACCEPTED_202;
            case NOT_FOUND -> HttpStatus.NOT_FOUND_404;
        });
        readToEnd(Content.Source.asInputStream(request));
        callback.succeeded();
    }

    /**
     * The request's body; on a plain connection, a read that finds no bytes first waits for them
     * on this thread ({@link SoapEndPoint#awaitRequestBytes}) before it waits through Jetty's selector.
     */
    private static Content.Source body(Request request) {
        if (!(request.getConnectionMetaData().getConnection().getEndPoint() instanceof SoapEndPoint endPoint)) {
            return request;   // over TLS the bytes come through the TLS end point
        }
        return new Request.Wrapper(request) {
            @Override
            public Content.Chunk read() {
                Content.Chunk chunk = super.read();
                while (chunk == null && endPoint.awaitRequestBytes()) {
                    chunk = super.read();
                }
                return chunk;
            }
        };
    }

    /**
     * Who sent a request, settled as the calls this server runs settle their caller (the client
     * certificate, unless a bearer token verifies), so that a cancel acts only on its own caller's
     * calls; null when its token does not verify: such a cancel acts on nothing.
     */
    private io.switchboard.protocol.Peer peer(Request request) {
        CallerIdentity caller = SoapCallers.of(request, tokens);
        return caller.refusal() == null ? caller.peer() : null;
    }

    /** What Axis2's servlet sets up for a request, less what nothing here reads (the servlet objects, the header map). */
    private MessageContext messageContext(Request request, Answer out) {
        MessageContext mc = context.createMessageContext();
        String scheme = request.isSecure() ? "https" : "http";
        mc.setIncomingTransportName(scheme);
        mc.setTransportIn(axis.getTransportIn(scheme));
        TransportOutDescription transportOut = axis.getTransportOut(scheme);
        mc.setTransportOut(transportOut != null ? transportOut : axis.getTransportOut(Constants.TRANSPORT_HTTP));
        mc.setServerSide(true);
        String remote = Request.getRemoteAddr(request);
        mc.setFrom(new EndpointReference(remote));
        mc.setProperty(MessageContext.REMOTE_ADDR, remote);
        // the client certificate, when the connection is mutual TLS (SecureRequestCustomizer puts it there)
        Object tls = request.getAttribute(org.eclipse.jetty.io.EndPoint.SslSessionData.ATTRIBUTE);
        org.eclipse.jetty.io.EndPoint.SslSessionData ssl = tls instanceof org.eclipse.jetty.io.EndPoint.SslSessionData s
                ? s : null;
        SoapCallers.record(mc, ssl == null ? null : ssl.peerCertificates(), ssl == null ? null : ssl.sslSession(),
                CallerIdentity.address(request.getConnectionMetaData().getRemoteSocketAddress()),
                request.getHeaders().get(HttpHeader.AUTHORIZATION));
        mc.setProperty(Constants.OUT_TRANSPORT_INFO, new AnswerInfo(out.response, true));
        mc.setProperty(RequestResponseTransport.TRANSPORT_CONTROL, new ResponseSignal());
        SoapEndPoint endPoint = SoapConnector.endPointOf(request);
        if (endPoint != null) {
            mc.setProperty(SoapEndPoint.PROPERTY, endPoint);
        }
        return mc;
    }

    /** The request's URL without its query, as Axis2 dispatches on it. */
    private static String address(Request request) {
        HttpURI uri = request.getHttpURI();
        return uri.getQuery() == null ? uri.asString() : HttpURI.build(uri).query(null).asString();
    }

    /**
     * Where Axis2 sets the answer's content type and headers; the status only where it may (Axis2
     * sets 500 on every fault it writes, and the status of a fault is chosen here).
     */
    private static final class AnswerInfo extends ServletBasedOutTransportInfo {
        private final Response response;
        private final boolean statusFromAxis;

        AnswerInfo(Response response, boolean statusFromAxis) {
            super(null);
            this.response = response;
            this.statusFromAxis = statusFromAxis;
        }

        @Override
        public void setContentType(String contentType) {
            response.getHeaders().put(HttpHeader.CONTENT_TYPE, contentType);
        }

        @Override
        public void addHeader(String name, String value) {
            response.getHeaders().add(name, value);
        }

        @Override
        public void setStatus(int status) {
            if (statusFromAxis) {
                response.setStatus(status);
            }
        }
    }

    /**
     * The answer as Axis2 writes it: kept whole up to {@value #WHOLE_ANSWER} bytes and sent in one
     * write with its length, before the rest of the request is read, as Axis2's embedded server did.
     * Axis2's client sends a request's last chunk a moment after its body: an answer held until it
     * arrived would wait for it, and a larger one, or one Axis2 flushed, would go out in chunks.
     * A larger answer goes out in chunks of {@value #WHOLE_ANSWER} bytes, however Axis2's writer
     * happened to cut its writes: fewer chunks, and the same bytes on the wire for the same answer.
     */
    private static final class Answer extends OutputStream {
        final Response response;
        private OutputStream stream;
        private byte[] buf = new byte[4096];   // grows to WHOLE_ANSWER: most answers are small
        private int count;

        Answer(Response response) {
            this.response = response;
        }

        @Override
        public void write(int b) throws IOException {
            write(new byte[] {(byte) b}, 0, 1);
        }

        @Override
        public void write(byte[] b, int off, int len) throws IOException {
            while (len > 0) {
                if (count + len > buf.length && buf.length < WHOLE_ANSWER) {
                    buf = Arrays.copyOf(buf, Math.min(WHOLE_ANSWER, Math.max(count + len, 2 * buf.length)));
                }
                if (count == buf.length) {
                    if (stream == null) {
                        stream = Content.Sink.asOutputStream(response);
                    }
                    stream.write(buf, 0, count);
                    count = 0;
                }
                int n = Math.min(len, buf.length - count);
                System.arraycopy(b, off, buf, count, n);
                count += n;
                off += n;
                len -= n;
            }
        }

        /** Axis2 flushes as it ends a message: the answer is sent whole by {@link #send} instead. */
        @Override
        public void flush() {
        }

        /** Sends what is kept (with its length, if that is all), or the last chunk and the end. */
        void send() throws IOException {
            if (stream != null) {
                stream.write(buf, 0, count);
                stream.close();
                return;
            }
            response.getHeaders().put(HttpHeader.CONTENT_LENGTH, count);
            try (Blocker.Callback sent = Blocker.callback()) {
                response.write(true, ByteBuffer.wrap(buf, 0, count), sent);
                sent.block();
            }
        }
    }

    /**
     * Reads what has come of the body's rest without waiting, up to its end: a few end tags the
     * parser has no more use for. Bounded, so that a body padded past its envelope is not read
     * here; its end then stays unread until the answer ({@link #readToEnd}).
     */
    private static void readArrivedEnd(Request request) {
        for (int i = 0; i < 16; i++) {
            Content.Chunk chunk = request.read();
            if (chunk == null) {
                return;
            }
            chunk.release();
            if (chunk.isLast() || Content.Chunk.isFailure(chunk)) {
                return;
            }
        }
    }

    /**
     * Reads what Axis2 left of the request (the envelope's end, the last chunk): Jetty keeps a
     * connection for the next request only when the last one was read whole, and closes it otherwise,
     * which a client about to reuse it would meet as a broken pipe. The read is bounded by the size
     * limit and the request deadline; past the limit it fails, and the connection ends.
     */
    private static void readToEnd(InputStream in) {
        try {
            byte[] sink = new byte[256];   // mostly the envelope's end tags and the last chunk
            while (in.read(sink) >= 0) {
                // dropped
            }
        } catch (IOException | RuntimeException e) {
            LOG.debug("reading the rest of the request", e);
        }
    }

    private void sendFault(MessageContext mc, Request request, Response response, OutputStream out, Exception e) {
        AxisFault fault = asRefusal(e, mc, request);
        LOG.debug("SOAP fault", fault);
        String state = (String) mc.getProperty(Constants.HTTP_RESPONSE_STATE);
        response.setStatus(state != null ? Integer.parseInt(state) : SoapFaults.httpStatusOf(fault, mc));
        try {
            MessageContext faultContext = MessageContextBuilder.createFaultMessageContext(mc, fault);
            faultContext.setProperty(MessageContext.TRANSPORT_OUT, out);
            faultContext.setProperty(Constants.OUT_TRANSPORT_INFO, new AnswerInfo(response, false));
            AxisEngine.sendFault(faultContext);
        } catch (AxisFault | RuntimeException f) {
            LOG.debug("cannot send the fault", f);
        }
    }

    /**
     * A body that Jetty's size limit stopped is a 413; a request the parser refused (broken markup,
     * or its depth or attribute limits, met while Axis2 reads the Header before any receiver of
     * ours) is the sender's fault, a {@code malformed} refusal (a Client fault), not a Server fault.
     */
    private AxisFault asRefusal(Exception e, MessageContext mc, Request request) {
        if (SoapFaults.httpStatus(e) == HttpStatus.PAYLOAD_TOO_LARGE_413) {
            mc.setProperty(Constants.HTTP_RESPONSE_STATE, "413");
            SoapEndPoint endPoint = SoapConnector.endPointOf(request);
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

    /** Axis2's hold on an answer that another thread sends (not used by Switchboard's receivers, which answer in place). */
    private static final class ResponseSignal implements RequestResponseTransport {
        private final CountDownLatch ready = new CountDownLatch(1);
        private volatile RequestResponseTransportStatus status = RequestResponseTransportStatus.WAITING;
        private volatile AxisFault fault;
        private volatile boolean written;

        @Override
        public void acknowledgeMessage(MessageContext msgContext) {
            status = RequestResponseTransportStatus.ACKED;
            ready.countDown();
        }

        @Override
        public void awaitResponse() throws InterruptedException, AxisFault {
            ready.await();
            if (fault != null) {
                throw fault;
            }
        }

        @Override
        public void signalResponseReady() {
            status = RequestResponseTransportStatus.SIGNALLED;
            ready.countDown();
        }

        @Override
        public RequestResponseTransportStatus getStatus() {
            return status;
        }

        @Override
        public void signalFaultReady(AxisFault fault) {
            this.fault = fault;
            signalResponseReady();
        }

        @Override
        public boolean isResponseWritten() {
            return written;
        }

        @Override
        public void setResponseWritten(boolean responseWritten) {
            written = responseWritten;
        }
    }
}
