package io.switchboard.protocol.soap;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.switchboard.protocol.ClientSettings;
import io.switchboard.protocol.Endpoint;
import io.switchboard.protocol.ServerSettings;
import io.switchboard.protocol.spi.ProtocolClient;
import io.switchboard.protocol.spi.ProtocolServer;
import io.switchboard.protocol.spi.Protocols;
import io.switchboard.testing.conformance.Conformance;
import io.switchboard.testing.conformance.ConformanceComponent;
import io.switchboard.testing.conformance.ConformanceImpl;
import java.io.InputStream;
import java.lang.reflect.Method;
import java.lang.reflect.Modifier;
import java.util.Properties;
import org.apache.axis2.transport.http.HTTPTransportUtils;
import org.eclipse.jetty.io.ByteArrayEndPoint;
import org.eclipse.jetty.io.Connection;
import org.eclipse.jetty.server.HttpConfiguration;
import org.eclipse.jetty.server.HttpConnectionFactory;
import org.eclipse.jetty.server.Server;
import org.eclipse.jetty.server.ServerConnector;
import org.eclipse.jetty.server.internal.HttpConnection;
import org.junit.jupiter.api.Test;

/**
 * Canaries of the SOAP server's reliance on Jetty's and Axis2's insides (the list is in
 * docs/architecture.md, "Library internals we rely on"): each fails, naming what changed, when an
 * upgrade takes away what a shortcut assumes. Each shortcut has a switch
 * ({@link LibraryInternals}) to take the public path while the shortcut is brought up to date.
 */
class LibraryInternalsCanaryTest {
    /** The Axis2 release {@link SoapPostHandler}'s message context was compared with. */
    private static final String AXIS2_CHECKED = "2.0.0";

    @Test
    void jettysFactoryStillMakesTheConnectionSoapHttpConnectionExtendsAndSetsNothingElse() throws Exception {
        Server server = new Server();
        ServerConnector connector = new ServerConnector(server);
        HttpConfiguration http = new HttpConfiguration();
        Connection plain = new HttpConnectionFactory(http).newConnection(connector, new ByteArrayEndPoint());
        Connection ours = new SoapHttpConnection.Factory(http).newConnection(connector, new ByteArrayEndPoint());
        assertEquals(HttpConnection.class, plain.getClass(), "Jetty's HttpConnectionFactory makes another connection"
                + " class now: SoapHttpConnection extends the old one");
        assertEquals(HttpConnection.class, ours.getClass().getSuperclass());
        // what newConnection configures, seen through every getter of a setting: SoapHttpConnection.Factory
        // copies that method's body, so what a Jetty release adds there shows up as a difference here
        int compared = 0;
        for (Method m : HttpConnection.class.getMethods()) {
            Class<?> type = m.getReturnType();
            boolean setting = type == boolean.class || type == int.class || type.isEnum()
                    || m.getName().endsWith("Compliance");
            if (m.getParameterCount() != 0 || Modifier.isStatic(m.getModifiers()) || !setting
                    || !(m.getName().startsWith("get") || m.getName().startsWith("is")) || m.getName().equals("toString")) {
                continue;
            }
            assertEquals(m.invoke(plain), m.invoke(ours), "HttpConnection." + m.getName() + "() differs between Jetty's"
                    + " factory and SoapHttpConnection.Factory: compare HttpConnectionFactory.newConnection with the copy");
            compared++;
        }
        assertTrue(compared >= 5, "only " + compared + " settings compared");
    }

    @Test
    void axis2IsTheReleaseSoapPostHandlersMessageContextWasComparedWith() throws Exception {
        Properties p = new Properties();
        try (InputStream in = HTTPTransportUtils.class.getResourceAsStream(
                "/META-INF/maven/org.apache.axis2/axis2-transport-http/pom.properties")) {
            assertNotNull(in, "axis2-transport-http's pom.properties");
            p.load(in);
        }
        assertEquals(AXIS2_CHECKED, p.getProperty("version"), "Axis2 was upgraded: SoapPostHandler calls"
                + " HTTPTransportUtils.processHTTPPostRequest itself and builds the message context that"
                + " AxisServlet.createMessageContext builds (and the servlet's doPost around it). Compare them with this"
                + " release, bring SoapPostHandler up to date, then set AXIS2_CHECKED here and the version in"
                + " docs/architecture.md; meanwhile -Dswitchboard.soap.directAxis2=false serves calls through the servlet");
    }

    @Test
    void theThreadThatAnsweredStillHandlesTheConnectionsNextRequest() {
        ProtocolServer server = Protocols.get("soap").newServer(ServerSettings.defaults().withBindAddress("127.0.0.1"));
        ProtocolClient client = Protocols.get("soap").newClient(ClientSettings.defaults());
        try {
            Endpoint at = server.export(ConformanceComponent.skeleton(new ConformanceImpl()));
            Conformance stub = ConformanceComponent.stub(client.connect(ConformanceComponent.DESCRIPTOR, at));
            stub.ping();
            long before = SoapEndPoint.HANDLED_ON_THREAD.sum();
            for (int i = 0; i < 50; i++) {
                stub.ping();
            }
            // Jetty asks the end point for fill interest from the thread that answered (SoapEndPoint defers it
            // there) and runs the connection's read callback when SoapEndPoint calls fillable(): if a Jetty
            // release does either another way, no request is handled by the waiting thread
            assertTrue(SoapEndPoint.HANDLED_ON_THREAD.sum() > before, "none of 50 calls back to back on one"
                    + " connection was handled by the thread that answered the one before");
        } finally {
            client.close();
            server.close();
        }
    }
}
