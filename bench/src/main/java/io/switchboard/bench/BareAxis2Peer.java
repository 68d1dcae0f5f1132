package io.switchboard.bench;

import java.io.IOException;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.util.Iterator;
import org.apache.axiom.om.OMAbstractFactory;
import org.apache.axiom.om.OMElement;
import org.apache.axiom.om.OMFactory;
import org.apache.axiom.om.OMNamespace;
import org.apache.axis2.AxisFault;
import org.apache.axis2.addressing.EndpointReference;
import org.apache.axis2.client.Options;
import org.apache.axis2.client.ServiceClient;
import org.apache.axis2.context.ConfigurationContext;
import org.apache.axis2.context.ConfigurationContextFactory;
import org.apache.axis2.description.AxisService;
import org.apache.axis2.kernel.http.HTTPConstants;
import org.apache.axis2.transport.http.SimpleHTTPServer;

/**
 * Bare Apache Axis2, what a team using Axis2 alone would deploy: a POJO service
 * ({@link AxisService#createService}, so Axis2's {@code RPCMessageReceiver} binds the call) on Axis2's
 * own {@code SimpleHTTPServer}, called by a {@link ServiceClient} with the request built in AXIOM, one
 * element per double as the POJO binding writes them. No Switchboard code on either side. The POJO
 * binding has no linked lists (they need bean properties and would recurse per node), so list
 * cells fail with that reason.
 *
 * <pre>{@code
 * try (BareAxis2Peer peer = new BareAxis2Peer(port)) {
 *     Object back = peer.roundTrip(Payload.of(Workload.DOUBLES, 10));
 * }
 * }</pre>
 */
final class BareAxis2Peer implements Peer {
    static final String NAME = "axis2";
    private static final String SERVICE = "PlainEcho";
    /** The namespace Axis2 derives from the service class's package. */
    private static final String NS = "http://bench.switchboard.io";

    private final int port;
    private final ServiceClient client;
    private final OMFactory factory = OMAbstractFactory.getOMFactory();
    private final OMNamespace ns = factory.createOMNamespace(NS, "ns");

    BareAxis2Peer(int port) throws AxisFault {
        this.port = port;
        this.client = client(port);
    }

    @Override
    public String name() {
        return NAME;
    }

    @Override
    public Object roundTrip(Payload p) throws Exception {
        return call(client, p);
    }

    @Override
    public long requestBytes(Payload p) throws Exception {
        try (CountingProxy proxy = new CountingProxy(port)) {
            ServiceClient counted = client(proxy.port());
            try {
                call(counted, p);
                long before = proxy.upstreamBytes();
                call(counted, p);
                return proxy.upstreamBytes() - before;
            } finally {
                counted.cleanup();
            }
        }
    }

    @Override
    public void close() {
        try {
            client.cleanup();
        } catch (AxisFault ignored) {
            // closing anyway
        }
    }

    private Object call(ServiceClient sc, Payload p) throws Exception {
        OMElement request;
        switch (p.workload()) {
            case EMPTY:
                request = factory.createOMElement("empty", ns);
                break;
            case DOUBLES:
                request = factory.createOMElement("echoDoubles", ns);
                for (double d : p.doubles()) {
                    factory.createOMElement("values", ns, request).setText(Double.toString(d));
                }
                break;
            default:
                throw new Failure("not measured: Axis2's POJO binding has no linked lists");
        }
        sc.getOptions().setAction("urn:" + request.getLocalName());
        try {
            OMElement response = sc.sendReceive(request);
            if (p.workload() == Workload.EMPTY) {
                return null;
            }
            double[] back = new double[p.size()];
            int i = 0;
            for (Iterator<OMElement> it = response.getChildrenWithLocalName("return"); it.hasNext(); i++) {
                String text = it.next().getText();
                if (i < back.length) {
                    back[i] = Double.parseDouble(text);
                }
            }
            return i == back.length ? back : new double[i];   // a wrong count fails the answer check
        } finally {
            sc.cleanupTransport();
        }
    }

    private static ServiceClient client(int port) throws AxisFault {
        ServiceClient sc = new ServiceClient();
        Options o = sc.getOptions();
        o.setTo(new EndpointReference("http://127.0.0.1:" + port + "/axis2/services/" + SERVICE));
        o.setProperty(HTTPConstants.REUSE_HTTP_CLIENT, Boolean.TRUE);   // keep-alive, as any Axis2 user is told to
        o.setTimeOutInMilliSeconds(Sweep.CALL_TIMEOUT_MILLIS);
        return sc;
    }

    /** Server side, in the forked JVM: the POJO service on Axis2's own HTTP server; returns its port. */
    static int serve() throws IOException {
        ConfigurationContext ctx = ConfigurationContextFactory.createConfigurationContextFromFileSystem(null, null);
        AxisService service = AxisService.createService(PlainEcho.class.getName(), ctx.getAxisConfiguration());
        service.setName(SERVICE);
        ctx.getAxisConfiguration().addService(service);
        int port;
        try (ServerSocket probe = new ServerSocket(0, 1, InetAddress.getLoopbackAddress())) {
            port = probe.getLocalPort();   // SimpleHTTPServer takes a port number, not 0
        }
        new SimpleHTTPServer(ctx, port).start();
        return port;
    }

    /** The POJO service: public methods become operations. */
    public static final class PlainEcho {
        public int empty() {
            return 0;
        }

        public double[] echoDoubles(double[] values) {
            return values;
        }
    }
}
