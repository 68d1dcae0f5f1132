package io.switchboard.protocol.soap;

import io.switchboard.idl.runtime.OperationDescriptor;
import io.switchboard.idl.runtime.ServiceDescriptor;
import io.switchboard.codec.XmlMessages;
import io.switchboard.protocol.Endpoint;
import io.switchboard.protocol.spi.ProtocolServer;
import io.switchboard.protocol.ServerSettings;
import io.switchboard.protocol.Skeleton;
import io.switchboard.protocol.SwitchboardException;
import java.io.IOException;
import java.io.StringReader;
import java.net.InetAddress;
import java.net.URL;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.SynchronousQueue;
import java.util.concurrent.ThreadFactory;
import java.util.concurrent.ThreadPoolExecutor;
import java.util.concurrent.atomic.AtomicInteger;
import javax.net.ssl.SSLContext;
import javax.wsdl.Definition;
import javax.wsdl.WSDLException;
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
import org.apache.axis2.transport.http.SimpleHTTPServer;
import org.apache.axis2.transport.http.server.HttpConnectionManager;
import org.apache.axis2.transport.http.server.HttpFactory;
import org.apache.axis2.transport.http.server.IOProcessor;
import org.apache.axis2.wsdl.WSDLConstants;
import org.apache.hc.core5.http.config.Http1Config;
import org.apache.hc.core5.http.io.SocketConfig;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.xml.sax.InputSource;

/**
 * Axis2 embedded without a servlet container: one HTTP listener, any number of components at
 * {@code http://HOST:PORT/axis2/services/NAME}, each with its compiler-made WSDL at {@code ?wsdl}.
 * Request bodies over the configured limit are refused with HTTP 413 before they are parsed.
 */
final class SoapServer implements ProtocolServer {
    private static final Logger LOG = LoggerFactory.getLogger(SoapServer.class);
    static final String CONFIG = "switchboard-axis2.xml";

    static {
        // Without it, stopping waits a fixed 3 s whenever a keep-alive connection is open.
        System.setProperty("org.apache.axis2.transport.http.server.fastShutdown", "true");
    }

    private final ServerSettings settings;
    private final Map<String, Skeleton> exported = new ConcurrentHashMap<>();
    private ConfigurationContext context;
    private SimpleHTTPServer http;
    private BoundFactory factory;
    private boolean closed;

    SoapServer(ServerSettings settings) {
        this.settings = settings;
    }

    @Override
    public String protocol() {
        return SoapProtocolProvider.NAME;
    }

    private synchronized void start() {
        if (closed) {
            throw new IllegalStateException("SOAP server is closed");
        }
        if (http != null) {
            return;
        }
        try {
            URL config = SoapServer.class.getResource(CONFIG);
            context = ConfigurationContextFactory.createConfigurationContextFromURIs(config, null);
            InetAddress bind = InetAddress.getByName(settings.bindAddress());
            long idleMillis = Math.min(Integer.MAX_VALUE, settings.idleTimeout().toMillis());
            factory = new BoundFactory(context, settings.port(),
                    new SizeLimitingWorkerFactory(settings.maxMessageBytes()), bind, 128,
                    settings.tls() == null ? null : settings.tls().context(),
                    new BoundConnectionListener.Limits(settings.maxConnections(), idleMillis,
                            settings.requestTimeout().toMillis(), settings.minRequestBytesPerSecond()));
            // a thread per connection that has sent a byte; idle ones wait on the guard's selector
            factory.setRequestMaxThreadPoolSize(settings.maxConnections());
            factory.setRequestSocketTimeout((int) idleMillis);
            http = new SimpleHTTPServer(factory);
            http.start();
            if (factory.listener.getPort() < 0) {
                throw new SwitchboardException("SOAP server cannot listen on " + settings.bindAddress() + ":"
                        + settings.port());
            }
            context.getAxisConfiguration().addParameter(new Parameter(Constants.HTTP_FRONTEND_HOST_URL, root()));
            LOG.debug("SOAP listening at {}", root());
        } catch (IOException e) {
            throw new SwitchboardException("SOAP server cannot start on " + settings.bindAddress() + ":"
                    + settings.port() + ": " + e.getMessage(), e);
        }
    }

    /** {@code http://HOST:PORT/axis2/}, or {@code https://} with TLS. */
    private String root() {
        String host = settings.hostForEndpoints();
        if (host.contains(":") && !host.startsWith("[")) {
            host = "[" + host + "]";
        }
        return (settings.tls() == null ? "http" : "https") + "://" + host + ":" + port() + "/axis2/";
    }

    int port() {
        return factory.listener.getPort();
    }

    /** The listener's connection guard; for tests. */
    ConnectionGuard connectionGuard() {
        return factory.listener.guard();
    }

    @Override
    public synchronized Endpoint export(Skeleton skeleton) {
        start();
        ServiceDescriptor d = skeleton.descriptor();
        if (exported.putIfAbsent(d.name(), skeleton) != null) {
            throw new IllegalStateException(d.name() + " is already exported on this SOAP server");
        }
        try {
            context.getAxisConfiguration().addService(service(skeleton));
        } catch (AxisFault | RuntimeException e) {
            exported.remove(d.name());
            throw new SwitchboardException("cannot export " + d.name() + " over SOAP: " + e.getMessage(), e);
        }
        return new Endpoint(protocol(), root() + "services/" + d.name());
    }

    private AxisService service(Skeleton skeleton) throws AxisFault {
        ServiceDescriptor d = skeleton.descriptor();
        XmlMessages xml = new XmlMessages(d, settings.maxGraphNodes());
        AxisService service = new AxisService(d.name());
        service.setTargetNamespace(d.namespace());
        for (OperationDescriptor op : d.operations()) {
            SkeletonMessageReceiver receiver = new SkeletonMessageReceiver(skeleton, op, xml);
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
        service.addParameter(new Parameter(WSDLConstants.WSDL_4_J_DEFINITION, wsdl(d)));
        service.addParameter(new Parameter("useOriginalwsdl", "true"));
        service.addParameter(new Parameter("modifyUserWSDLPortAddress", "true"));
        return service;
    }

    private static Definition wsdl(ServiceDescriptor d) throws AxisFault {
        try {
            WSDLReader reader = WSDLFactory.newInstance().newWSDLReader();
            reader.setFeature("javax.wsdl.verbose", false);
            reader.setFeature("javax.wsdl.importDocuments", false);
            return reader.readWSDL(null, new InputSource(new StringReader(d.document(ServiceDescriptor.WSDL))));
        } catch (WSDLException e) {
            throw AxisFault.makeFault(e);
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
        if (http != null) {
            withoutStopBanner(http::stop);
            try {
                context.terminate();
            } catch (AxisFault e) {
                LOG.debug("terminating the Axis2 context", e);
            }
        }
    }

    /**
     * Axis2 prints "[SimpleHTTPServer] Stop called" to standard output on every stop, which would
     * land in the output of command-line tools; this drops that one line and passes the rest.
     */
    private static void withoutStopBanner(Runnable stop) {
        synchronized (System.class) {
            java.io.PrintStream original = System.out;
            System.setOut(new java.io.PrintStream(original, true) {
                @Override
                public void println(String line) {
                    if (!"[SimpleHTTPServer] Stop called".equals(line)) {
                        super.println(line);
                    }
                }
            });
            try {
                stop.run();
            } finally {
                System.setOut(original);
            }
        }
    }

    /** Axis2's HTTP factory, but listening on the configured address and remembering the listener. */
    static final class BoundFactory extends HttpFactory {
        private static final int THREAD_SLACK = 16;
        private final InetAddress bindAddress;
        private final int backlog;
        private final SSLContext tls;
        private final BoundConnectionListener.Limits limits;
        volatile BoundConnectionListener listener;

        /** @param tls makes every connection a TLS one; null for plain HTTP */
        BoundFactory(ConfigurationContext cc, int port, SizeLimitingWorkerFactory wf, InetAddress bindAddress,
                     int backlog, SSLContext tls, BoundConnectionListener.Limits limits) throws AxisFault {
            super(cc, port, wf);
            this.bindAddress = bindAddress;
            this.backlog = backlog;
            this.tls = tls;
            this.limits = limits;
        }

        /**
         * Axis2's pool, with named daemon threads that swallow the NPE Axis2 2.0.0 throws when it
         * closes an already closed connection (harmless, but it prints a stack trace).
         */
        @Override
        public ExecutorService newRequestExecutor(int port) {
            AtomicInteger n = new AtomicInteger();
            ThreadFactory tf = r -> {
                Thread t = new Thread(r, "soap-" + port + "-" + n.incrementAndGet());
                t.setDaemon(true);
                t.setUncaughtExceptionHandler((th, e) -> LOG.trace("connection thread ended: {}", e.toString()));
                return t;
            };
            // a cached pool: idle threads are reused, and there are never more than the connections
            // being served; the guard bounds those, and the slack covers threads still finishing
            // the work of a connection that has already been counted as closed
            return new ThreadPoolExecutor(0, getRequestMaxThreadPoolSize() + THREAD_SLACK, getThreadKeepAliveTime(),
                    getThreadKeepAliveTimeUnit(), new SynchronousQueue<>(), tf);
        }

        @Override
        public IOProcessor newRequestConnectionListener(String scheme, int port, HttpConnectionManager manager,
                                                        Http1Config http1Config, SocketConfig socketConfig)
                throws IOException {
            listener = new BoundConnectionListener(tls == null ? scheme : "https", bindAddress, port, backlog, manager,
                    http1Config, socketConfig, tls, limits);
            return listener;
        }
    }
}
