package io.switchboard.protocol.soap;

import io.switchboard.idl.runtime.OperationDescriptor;
import io.switchboard.idl.runtime.ServiceDescriptor;
import io.switchboard.codec.XmlCodec;
import io.switchboard.protocol.Endpoint;
import io.switchboard.protocol.spi.Endpoints;
import io.switchboard.protocol.spi.ProtocolServer;
import io.switchboard.protocol.ServerSettings;
import io.switchboard.protocol.Skeleton;
import io.switchboard.protocol.SwitchboardException;
import io.switchboard.protocol.spi.StrangerWarnings;
import java.io.StringReader;
import java.net.URL;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import javax.wsdl.Definition;
import javax.wsdl.WSDLException;
import javax.wsdl.extensions.soap.SOAPAddress;
import javax.wsdl.factory.WSDLFactory;
import javax.wsdl.xml.WSDLReader;
import org.apache.axis2.AxisFault;
import org.apache.axis2.Constants;
import org.apache.axis2.context.ConfigurationContext;
import org.apache.axis2.context.ConfigurationContextFactory;
import org.apache.axis2.description.AxisOperation;
import org.apache.axis2.description.AxisService;
import org.apache.axis2.description.InOnlyAxisOperation;
import org.apache.axis2.description.InOutAxisOperation;
import org.apache.axis2.description.Parameter;
import org.apache.axis2.description.TransportInDescription;
import org.apache.axis2.engine.ListenerManager;
import org.apache.axis2.transport.http.AxisServletListener;
import org.apache.axis2.wsdl.WSDLConstants;
import org.eclipse.jetty.ee10.servlet.ServletContextHandler;
import org.eclipse.jetty.io.EndPoint;
import org.eclipse.jetty.io.ssl.SslConnection;
import org.eclipse.jetty.io.ssl.SslHandshakeListener;
import org.eclipse.jetty.ee10.servlet.ServletHolder;
import org.eclipse.jetty.server.ConnectionFactory;
import org.eclipse.jetty.server.HttpConfiguration;
import org.eclipse.jetty.server.HttpConnectionFactory;
import org.eclipse.jetty.server.SecureRequestCustomizer;
import org.eclipse.jetty.server.Server;
import org.eclipse.jetty.server.SslConnectionFactory;
import org.eclipse.jetty.server.handler.ContextHandler;
import org.eclipse.jetty.server.handler.ContextHandlerCollection;
import org.eclipse.jetty.server.handler.GracefulHandler;
import org.eclipse.jetty.server.handler.SizeLimitHandler;
import org.eclipse.jetty.util.ssl.SslContextFactory;
import org.eclipse.jetty.util.thread.QueuedThreadPool;
import org.eclipse.jetty.util.thread.ScheduledExecutorScheduler;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.xml.sax.InputSource;

/**
 * The SOAP listener: Axis2 on an embedded Jetty 12, one Jetty for every component of the server
 * at {@code http://HOST:PORT/axis2/services/NAME}. A call (POST) goes from Jetty's request straight
 * into Axis2's engine ({@link SoapPostHandler}); each component's compiler-made WSDL is served at
 * {@code ?wsdl} by Axis2's servlet ({@link SoapServlet}), its {@code soap:address} the address the
 * component is exported at ({@code https://} with TLS). The bounds of {@link ServerSettings}, each from Jetty:
 * <ul>
 * <li>a request body over {@code maxMessageBytes} is answered 413 before it is parsed, by its
 *     {@code Content-Length} or, when chunked, as the count passes the limit (Jetty's
 *     {@link SizeLimitHandler}; the fault is written by {@link SoapErrorHandler});</li>
 * <li>a request must arrive within {@code requestTimeout} plus its size at
 *     {@code minRequestBytesPerSecond}, or gets 408 ({@link SoapEndPoint});</li>
 * <li>a connection idle for {@code idleTimeout} is closed (the connector's idle timeout);</li>
 * <li>at {@code maxConnections} a new connection displaces the longest idle one, or gets 503
 *     ({@link SoapConnector});</li>
 * <li>TLS from {@code tls} through Jetty's {@link SslContextFactory.Server}; with a trust store in
 *     it, client certificates are required (mutual TLS), and failed handshakes are counted
 *     ({@link #refusedConnections}) and logged;</li>
 * <li>at most {@code maxConnections} + {@value #THREAD_SLACK} threads; a thread serves a request
 *     only while it runs, idle connections take none.</li>
 * </ul>
 * Closing stops accepting, closes idle connections at once and lets each request in progress
 * finish its answer (for up to {@value #STOP_MILLIS} ms), which ends its connection.
 */
final class SoapServer implements ProtocolServer {
    private static final Logger LOG = LoggerFactory.getLogger(SoapServer.class);
    static final String CONFIG = "switchboard-axis2.xml";
    /** Threads beyond one per connection: the acceptor, the selector and Jetty's reserved threads. */
    private static final int THREAD_SLACK = 16;
    private static final long STOP_MILLIS = 5_000;

    private final ServerSettings settings;
    private final LibraryInternals shortcuts;
    private final Map<String, Skeleton> exported = new ConcurrentHashMap<>();
    private final Refusals refusals;
    /** The calls under way with a call id, for the clients' cancel messages. */
    private final SoapCalls calls;
    private ConfigurationContext context;
    private Server jetty;
    private SoapConnector connector;
    /** Axis2's {@code /axis2} and the pages {@link #mount}ed beside it. */
    private ContextHandlerCollection contexts;
    private boolean closed;

    SoapServer(ServerSettings settings, LibraryInternals shortcuts) {
        this.settings = settings;
        this.refusals = new Refusals(settings.tls());
        this.shortcuts = shortcuts;
        // an early cancel waits as long as its request may take to arrive
        this.calls = new SoapCalls(settings.requestTimeout(), SoapCalls.PER_IDENTITY, SoapCalls.IN_ALL, System::nanoTime);
    }

    @Override
    public String protocol() {
        return SoapProtocolProvider.NAME;
    }

    private synchronized void start() {
        if (closed) {
            throw new IllegalStateException("SOAP server is closed");
        }
        if (jetty != null) {
            return;
        }
        boolean tls = settings.tls() != null;
        try {
            URL config = SoapServer.class.getResource(CONFIG);
            context = ConfigurationContextFactory.createConfigurationContextFromURIs(config, null);
            // Axis2's servlet takes requests for the transports that have its listener
            AxisServletListener listener = new AxisServletListener();
            TransportInDescription in = new TransportInDescription(tls ? "https" : "http");
            in.setReceiver(listener);
            context.getAxisConfiguration().addTransportIn(in);
            ListenerManager listeners = new ListenerManager();
            listeners.setShutdownHookRequired(false);   // closed with the server, not at JVM exit
            listeners.init(context);
            listeners.start();

            QueuedThreadPool threads = new QueuedThreadPool(settings.maxConnections() + THREAD_SLACK, 2,
                    (int) Math.min(Integer.MAX_VALUE, settings.idleTimeout().toMillis()));
            threads.setName("soap");
            threads.setDaemon(true);
            // daemon threads throughout, as before: a server left open does not keep the JVM alive
            jetty = new Server(threads, new ScheduledExecutorScheduler("soap-scheduler", true), null);
            jetty.setStopTimeout(STOP_MILLIS);
            jetty.setErrorHandler(new SoapErrorHandler(settings.maxMessageBytes()));

            HttpConfiguration http = new HttpConfiguration();
            http.setSendServerVersion(false);
            http.setSendXPoweredBy(false);
            HttpConnectionFactory h1 = shortcuts.connection() ? new SoapHttpConnection.Factory(http)
                    : new HttpConnectionFactory(http);
            ConnectionFactory[] factories;
            if (tls) {
                http.addCustomizer(new SecureRequestCustomizer(false));   // https for Axis2; no SNI host check
                // the settings' key; with a trust store, mutual TLS: a caller without a certificate
                // it trusts fails the handshake and never reaches Axis2
                SslContextFactory.Server ssl = new SslContextFactory.Server();
                ssl.setSslContext(settings.tls().context());
                ssl.setNeedClientAuth(settings.tls().requiresTrustedPeer());
                SslConnectionFactory tlsFactory = new SslConnectionFactory(ssl, h1.getProtocol());
                tlsFactory.addBean(refusals);
                factories = new ConnectionFactory[] {tlsFactory, h1};
            } else {
                factories = new ConnectionFactory[] {h1};
            }
            connector = new SoapConnector(jetty, settings, shortcuts, factories);
            connector.setHost(settings.bindAddress());
            connector.setPort(settings.port());
            connector.setReuseAddress(true);
            connector.setAcceptQueueSize(128);
            connector.setIdleTimeout(settings.idleTimeout().toMillis());
            jetty.addConnector(connector);

            ServletContextHandler axis2 = new ServletContextHandler("/axis2", ServletContextHandler.NO_SESSIONS);
            ServletHolder servlet = new ServletHolder("axis2", new SoapServlet(context));
            servlet.setInitOrder(0);
            axis2.addServlet(servlet, "/services/*");
            context.setContextRoot("/axis2");   // where Axis2 finds a service's name in the request's URL
            SizeLimitHandler sizeLimit = new SizeLimitHandler(settings.maxMessageBytes(), -1);
            contexts = new ContextHandlerCollection(axis2);
            // a call (POST to /axis2/services/...) goes straight to Axis2; the rest (?wsdl, mounted pages) to the contexts
            sizeLimit.setHandler(new SoapPostHandler(context, settings.maxMessageBytes(), calls, settings.tokenVerifier(),
                    shortcuts.directAxis2(), contexts));
            jetty.setHandler(new GracefulHandler(new SoapConnector.Tracker(new UntrustedSessionRefusals(sizeLimit))));
            jetty.start();

            listener.setPort(connector.getLocalPort());
            context.getAxisConfiguration().addParameter(new Parameter(Constants.HTTP_FRONTEND_HOST_URL, root()));
            LOG.debug("SOAP listening at {}", root());
        } catch (Exception e) {
            stopQuietly();
            jetty = null;
            connector = null;
            throw new SwitchboardException("SOAP server cannot start on " + settings.bindAddress() + ":"
                    + settings.port() + ": " + e.getMessage(), e);
        }
    }

    /** {@code http://HOST:PORT/axis2/}, or {@code https://} with TLS. */
    private String root() {
        String host = Endpoints.uriHost(settings.hostForEndpoints());
        return (settings.tls() == null ? "http" : "https") + "://" + host + ":" + port() + "/axis2/";
    }

    int port() {
        return connector.getLocalPort();
    }

    /** The connector's HTTP/1.1 factory: ours, or Jetty's own with {@link LibraryInternals#connection} off. */
    HttpConnectionFactory httpFactory() {
        return connector.getConnectionFactory(HttpConnectionFactory.class);
    }

    @Override
    public long shedConnections() {
        SoapConnector c = connector;
        return c == null ? 0 : c.shed();
    }

    @Override
    public long refusedConnections() {
        return refusals.refused.count();
    }

    /**
     * Counts and logs the TLS handshakes that fail: a caller without a trusted certificate, or one
     * speaking plain HTTP to the TLS port. The log names the peer and JSSE's reason, nothing secret.
     * The connection's close lingers: under TLS 1.3 the client sends its request right after its
     * half of the handshake, and a close with that request unread resets the connection, so the
     * client, still writing, saw a broken pipe (and said the call may have run) instead of the
     * server's alert (the handshake refused: not delivered).
     */
    private static final class Refusals implements SslHandshakeListener {
        final StrangerWarnings refused = new StrangerWarnings("refused at TLS");
        /** The server's TLS, or null for plain text. */
        private final io.switchboard.protocol.TlsSettings tls;

        Refusals(io.switchboard.protocol.TlsSettings tls) {
            this.tls = tls;
        }

        /**
         * A resumed session shows its client's certificate to no trust manager: the chain is
         * checked here against the trust store and lists in force now, and the requests of a
         * client no longer trusted are answered as refused ({@link UntrustedSessionRefusals}).
         */
        @Override
        public void handshakeSucceeded(Event event) throws javax.net.ssl.SSLException {
            if (tls == null || !tls.requiresTrustedPeer()) {
                return;
            }
            try {
                tls.checkClientStillTrusted(event.getSSLEngine().getSession());
            } catch (java.security.cert.CertificateException e) {
                if (!(soapEndPoint(event) instanceof SoapEndPoint soap)) {
                    // no end point of ours to mark: the handshake fails, and Jetty closes before reading a request
                    throw new javax.net.ssl.SSLHandshakeException("the client is no longer trusted: " + e.getMessage());
                }
                soap.noLongerTrusted(true);
                refused.log(LOG, "SOAP refused a connection from {} at TLS: the client is no longer trusted: {}",
                        event.getEndPoint().getRemoteSocketAddress(), e.getMessage());
            }
        }

        @Override
        public void handshakeFailed(Event event, Throwable failure) {
            if (soapEndPoint(event) instanceof SoapEndPoint soap) {
                soap.lingerAtClose();
            }
            refused.log(LOG, "SOAP refused a connection from {} at TLS: {}", event.getEndPoint().getRemoteSocketAddress(),
                    failure.getMessage());
        }

        /** The connection's own end point, under its TLS. */
        private static EndPoint soapEndPoint(Event event) {
            EndPoint e = event.getEndPoint();
            return e instanceof SslConnection.SslEndPoint ssl ? ssl.getSslConnection().getEndPoint() : e;
        }
    }

    /** The listener's connector; for tests (its open and busy connections). */
    SoapConnector connector() {
        return connector;
    }

    /** Threads running a request right now (not the acceptor or selector); for tests. */
    int requestThreads() {
        return ((QueuedThreadPool) jetty.getThreadPool()).getUtilizedThreads();
    }

    @Override
    public synchronized Endpoint export(Skeleton skeleton) {
        start();
        ServiceDescriptor d = skeleton.descriptor();
        if (exported.putIfAbsent(d.name(), skeleton) != null) {
            throw new IllegalStateException(d.name() + " is already exported on this SOAP server");
        }
        Endpoint endpoint = new Endpoint(protocol(), root() + "services/" + d.name());
        try {
            context.getAxisConfiguration().addService(service(skeleton, endpoint.address()));
        } catch (AxisFault | RuntimeException e) {
            exported.remove(d.name());
            throw new SwitchboardException("cannot export " + d.name() + " over SOAP: " + e.getMessage(), e);
        }
        return endpoint;
    }

    private AxisService service(Skeleton skeleton, String address) throws AxisFault {
        ServiceDescriptor d = skeleton.descriptor();
        XmlCodec xml = XmlCodec.of(d, settings.maxGraphNodes());   // JAXB for generated beans, model-driven for DynamicRecords
        AxisService service = new AxisService(d.name());
        service.setTargetNamespace(d.namespace());
        for (OperationDescriptor op : d.operations()) {
            SkeletonMessageReceiver receiver = new SkeletonMessageReceiver(skeleton, op, xml, calls, settings.tokenVerifier(),
                    settings.tls());
            AxisOperation axisOp;
            if (op.oneWay()) {
                axisOp = new InOnlyAxisOperation(op.requestElement());
                // robust in-only: the client's sendRobust gets a fault when the operation fails
                axisOp.setMessageExchangePattern(org.apache.axis2.description.WSDL2Constants.MEP_URI_ROBUST_IN_ONLY);
                axisOp.setMessageReceiver(new OneWayMessageReceiver(receiver));
            } else {
                axisOp = new InOutAxisOperation(op.requestElement());
                axisOp.setMessageReceiver(receiver);
            }
            axisOp.setSoapAction(op.soapAction());
            service.addOperation(axisOp);
            service.mapActionToOperation(op.soapAction(), axisOp);
            service.addMessageElementQNameToOperationMapping(op.requestElement(), axisOp);
        }
        service.addParameter(new Parameter(WSDLConstants.WSDL_4_J_DEFINITION, wsdl(d, address)));
        service.addParameter(new Parameter("useOriginalwsdl", "true"));
        // the WSDL carries the endpoint's own address already; Axis2's rewrite would look for a
        // listener of the placeholder's scheme (http) and fail the ?wsdl of a TLS server
        service.addParameter(new Parameter("modifyUserWSDLPortAddress", "false"));
        return service;
    }

    /**
     * The compiler-made WSDL with every {@code soap:address} set to {@code address}: the address
     * this server publishes for the component, {@code https://} with TLS.
     */
    private static Definition wsdl(ServiceDescriptor d, String address) throws AxisFault {
        Definition definition;
        try {
            WSDLReader reader = WSDLFactory.newInstance().newWSDLReader();
            reader.setFeature("javax.wsdl.verbose", false);
            reader.setFeature("javax.wsdl.importDocuments", false);
            definition = reader.readWSDL(null, new InputSource(new StringReader(d.document(ServiceDescriptor.WSDL))));
        } catch (WSDLException e) {
            throw AxisFault.makeFault(e);
        }
        for (Object service : definition.getServices().values()) {
            for (Object port : ((javax.wsdl.Service) service).getPorts().values()) {
                for (Object element : ((javax.wsdl.Port) port).getExtensibilityElements()) {
                    if (element instanceof SOAPAddress soap) {
                        soap.setLocationURI(address);
                    }
                }
            }
        }
        return definition;
    }

    /** Serves a read-only page at {@code path} beside {@code /axis2}; starts the listener if need be. */
    @Override
    public synchronized void mount(String path, io.switchboard.protocol.spi.WebHandler handler) {
        if (path == null || !path.matches("/[a-z][a-z0-9-]{0,31}") || path.equals("/axis2")) {
            throw new IllegalArgumentException("a page is mounted at /NAME (lower case, not /axis2), not " + path);
        }
        start();
        for (org.eclipse.jetty.server.Handler h : contexts.getHandlers()) {
            if (h instanceof ContextHandler c && c.getContextPath().equals(path)) {
                throw new IllegalStateException(path + " is mounted already");
            }
        }
        ContextHandler page = MountedPage.at(path, handler, settings.tokenVerifier());
        contexts.addHandler(page);
        try {
            if (!page.isStarted()) {
                page.start();
            }
        } catch (Exception e) {
            throw new SwitchboardException("cannot mount " + path + ": " + e.getMessage(), e);
        }
    }

    @Override
    public synchronized void unexport(String componentName) {
        if (exported.remove(componentName) != null && context != null) {
            try {
                context.getAxisConfiguration().removeService(componentName);
            } catch (AxisFault e) {
                throw new SwitchboardException("cannot unexport " + componentName + ": " + e.getMessage(), e);
            }
        }
    }

    @Override
    public synchronized void close() {
        if (closed) {
            return;
        }
        closed = true;
        exported.clear();
        stopQuietly();
    }

    /**
     * Stops the listener, then Jetty, then Axis2's context, each whatever the step before did. Jetty
     * 12.0's graceful shutdown of a connector runs each connection's idle check, which can throw
     * when the connection's request completes meanwhile on another thread (caught in
     * {@link SoapEndPoint#onIdleExpired}); whatever else the listener's shutdown throws, Jetty's stop
     * shuts the connector down again and closes its connections, and the port is free.
     */
    private void stopQuietly() {
        if (connector != null) {
            try {
                connector.shutdown();   // stops accepting; an answer in progress now ends its connection
                connector.closeIdle();
            } catch (RuntimeException e) {
                LOG.debug("shutting the SOAP listener down; Jetty's stop does it again", e);
            }
        }
        if (jetty != null) {
            try {
                jetty.stop();   // waits for the answers in progress, then closes what is left
            } catch (Exception e) {
                LOG.debug("stopping the SOAP server", e);
            }
        }
        // Axis2's servlet terminates the context when Jetty destroys it; if it never started, here
        if (context != null && context.getAxisConfiguration() != null) {
            try {
                context.terminate();
            } catch (AxisFault | RuntimeException e) {
                LOG.debug("terminating the Axis2 context", e);
            }
        }
    }
}
