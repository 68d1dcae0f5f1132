package io.switchboard.protocol.soap;

import jakarta.servlet.ServletConfig;
import org.apache.axis2.context.ConfigurationContext;
import org.apache.axis2.transport.http.AxisServlet;

/**
 * Axis2's servlet on the server's own configuration, for what is not a call: each component's WSDL
 * at {@code ?wsdl}. Calls (POST) reach it only with {@link LibraryInternals#directAxis2} off: otherwise
 * {@link SoapPostHandler} serves them in front.
 */
final class SoapServlet extends AxisServlet {
    private static final long serialVersionUID = 1L;

    /** Calls (POSTs) this servlet served, in this JVM (for tests: only with {@link LibraryInternals#directAxis2} off). */
    static final java.util.concurrent.atomic.LongAdder POSTS = new java.util.concurrent.atomic.LongAdder();

    private final transient ConfigurationContext context;

    SoapServlet(ConfigurationContext context) {
        this.context = context;
    }

    @Override
    protected ConfigurationContext initConfigContext(ServletConfig config) {
        return context;
    }

    @Override
    protected void doPost(jakarta.servlet.http.HttpServletRequest request, jakarta.servlet.http.HttpServletResponse response)
            throws jakarta.servlet.ServletException, java.io.IOException {
        POSTS.increment();
        super.doPost(request, response);
    }

    /**
     * As Axis2's, with the caller's certificate and {@code Authorization} header recorded for the
     * receiver, and the connection's end point, which cancels the call if its client goes away
     * (looked for once the request has been read to its end).
     */
    @Override
    protected org.apache.axis2.context.MessageContext createMessageContext(jakarta.servlet.http.HttpServletRequest request,
            jakarta.servlet.http.HttpServletResponse response, boolean invocationType) throws java.io.IOException {
        org.apache.axis2.context.MessageContext mc = super.createMessageContext(request, response, invocationType);
        Object chain = request.getAttribute("jakarta.servlet.request.X509Certificate");
        String remote = request.getRemoteAddr();
        Object tls = request.getAttribute(org.eclipse.jetty.io.EndPoint.SslSessionData.ATTRIBUTE);
        SoapCallers.record(mc, chain instanceof java.security.cert.Certificate[] c ? c : null,
                tls instanceof org.eclipse.jetty.io.EndPoint.SslSessionData ssl ? ssl.sslSession() : null,
                remote == null ? null : (remote.indexOf(':') >= 0 ? "[" + remote + "]" : remote) + ":" + request.getRemotePort(),
                request.getHeader("Authorization"));
        SoapEndPoint endPoint = endPointOf(request);
        if (endPoint != null) {
            mc.setProperty(SoapEndPoint.PROPERTY, endPoint);
        }
        return mc;
    }

    private static SoapEndPoint endPointOf(jakarta.servlet.http.HttpServletRequest request) {
        try {
            org.eclipse.jetty.server.Request jetty = org.eclipse.jetty.ee10.servlet.ServletContextRequest
                    .getServletContextRequest(request);
            return jetty == null ? null : SoapConnector.endPointOf(jetty);
        } catch (IllegalStateException e) {   // not a request of Jetty's
            return null;
        }
    }
}
