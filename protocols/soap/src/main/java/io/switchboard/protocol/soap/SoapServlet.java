package io.switchboard.protocol.soap;

import jakarta.servlet.ServletConfig;
import org.apache.axis2.context.ConfigurationContext;
import org.apache.axis2.transport.http.AxisServlet;

/**
 * Axis2's servlet on the server's own configuration, for what is not a call: each component's WSDL
 * at {@code ?wsdl}. Calls (POST) reach it only with {@link LibraryInternals#DIRECT_AXIS2} off: otherwise
 * {@link SoapPostHandler} serves them in front.
 */
final class SoapServlet extends AxisServlet {
    private static final long serialVersionUID = 1L;

    private final transient ConfigurationContext context;

    SoapServlet(ConfigurationContext context) {
        this.context = context;
    }

    @Override
    protected ConfigurationContext initConfigContext(ServletConfig config) {
        return context;
    }
}
