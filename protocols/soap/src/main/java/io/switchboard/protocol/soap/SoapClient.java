package io.switchboard.protocol.soap;

import io.switchboard.idl.runtime.ServiceDescriptor;
import io.switchboard.protocol.ClientSettings;
import io.switchboard.protocol.DaemonThreads;
import io.switchboard.protocol.Endpoint;
import io.switchboard.protocol.spi.ProtocolClient;
import io.switchboard.protocol.SwitchboardException;
import io.switchboard.protocol.spi.Transport;
import java.io.IOException;
import java.util.concurrent.ConcurrentLinkedDeque;
import org.apache.axis2.AxisFault;
import org.apache.axis2.client.Options;
import org.apache.axis2.client.ServiceClient;
import org.apache.axis2.context.ConfigurationContext;
import org.apache.axis2.context.ConfigurationContextFactory;
import org.apache.axis2.kernel.http.HTTPConstants;
import org.apache.hc.client5.http.config.ConnectionConfig;
import org.apache.hc.client5.http.impl.classic.CloseableHttpClient;
import org.apache.hc.client5.http.impl.classic.HttpClientBuilder;
import org.apache.hc.client5.http.impl.io.PoolingHttpClientConnectionManager;
import org.apache.hc.client5.http.impl.io.PoolingHttpClientConnectionManagerBuilder;
import org.apache.hc.client5.http.ssl.DefaultClientTlsStrategy;
import org.apache.hc.core5.util.TimeValue;
import org.apache.hc.core5.util.Timeout;

/**
 * The client side of SOAP: one Axis2 configuration and one pooled HTTP client shared by every
 * transport it makes. Axis2's {@link ServiceClient} is not thread-safe, so calls borrow one from a
 * pool.
 */
final class SoapClient implements ProtocolClient {
    private final ClientSettings settings;
    private final ConfigurationContext context;
    private final CloseableHttpClient http;
    private final PoolingHttpClientConnectionManager connections;
    private final ConcurrentLinkedDeque<ServiceClient> idle = new ConcurrentLinkedDeque<>();
    private volatile boolean closed;

    SoapClient(ClientSettings settings) {
        this.settings = settings;
        try {
            this.context = ConfigurationContextFactory.createConfigurationContextFromURIs(
                    SoapServer.class.getResource(SoapServer.CONFIG), null);
        } catch (AxisFault e) {
            throw new SwitchboardException("cannot set up the SOAP client: " + e.getMessage(), e);
        }
        Timeout connect = Timeout.ofMilliseconds(settings.connectTimeout().toMillis());
        this.connections = PoolingHttpClientConnectionManagerBuilder.create()
                        .setMaxConnPerRoute(64).setMaxConnTotal(256)
                        // https endpoints: the settings' trust, else the JVM's (javax.net.ssl.trustStore)
                        .setTlsSocketStrategy(settings.tls() == null ? DefaultClientTlsStrategy.createSystemDefault()
                                : new DefaultClientTlsStrategy(settings.tls().context()))
                        // a pooled connection idle for a second is checked before reuse (a read of at
                        // most 1 ms): a server that died meanwhile then gives "connection refused"
                        // (not delivered, safe to repeat elsewhere) instead of a broken pipe mid-request
                        .setDefaultConnectionConfig(ConnectionConfig.custom().setConnectTimeout(connect)
                                .setValidateAfterInactivity(TimeValue.ofSeconds(1))
                                .setTimeToLive(TimeValue.ofMinutes(5)).build())
                        .build();
        this.http = HttpClientBuilder.create()
                .setConnectionManager(connections)
                // an async call's exchange can be aborted when the call is cancelled
                .addExecInterceptorFirst("switchboard-cancel", SoapExchange.TRACKER)
                // a server's "busy, not run" is told apart from any other 503
                .addExecInterceptorFirst(ServerBusyAnswers.NAME, new ServerBusyAnswers())
                .evictIdleConnections(TimeValue.ofSeconds(10))
                .disableAutomaticRetries()
                .disableContentCompression()
                // a call is one POST to one endpoint: no redirect is followed (a moved component is found
                // through the registry), no cookie or auth state is kept, and each step left out is one
                // the client no longer runs on every call
                .disableRedirectHandling()
                .disableCookieManagement()
                .disableAuthCaching()
                .disableConnectionState()
                .addExecInterceptorFirst(WireCounting.NAME, new WireCounting())
                .addExecInterceptorFirst(DeferredFlush.NAME, new DeferredFlush())
                .build();
    }

    @Override
    public String protocol() {
        return SoapProtocolProvider.NAME;
    }

    @Override
    public Transport connect(ServiceDescriptor descriptor, Endpoint endpoint) {
        if (!SoapProtocolProvider.NAME.equals(endpoint.protocol())) {
            throw new IllegalArgumentException("not a SOAP endpoint: " + endpoint);
        }
        return new SoapTransport(this, descriptor, endpoint);
    }

    /** HTTP connections in use by calls right now (tests: an aborted exchange gives its connection up). */
    int leasedConnections() {
        return connections.getTotalStats().getLeased();
    }

    /**
     * Tells the server at {@code address} to cancel the call {@code callId} (see {@code SoapCalls}),
     * in the background: a {@code POST} with the cancel header and no body, on the client's
     * connections and TLS. The server keeps a cancel that comes before its call for that call,
     * unless {@code runningOnly} (the caller may send the call again under the same id). Its
     * answer (204 cancelled, 202 kept, 404, or a fault from a server that does not know the
     * header) is ignored, as is a failure to reach it.
     */
    void sendCancel(String address, String callId, boolean runningOnly) {
        if (closed) {
            return;
        }
        java.util.concurrent.Executor executor = settings.executor();
        Runnable send = () -> {
            org.apache.hc.client5.http.classic.methods.HttpPost post =
                    new org.apache.hc.client5.http.classic.methods.HttpPost(address);
            post.setHeader(SoapCalls.CANCEL_HEADER, callId);
            if (runningOnly) {
                post.setHeader(SoapCalls.RUNNING_ONLY_HEADER, "true");
            }
            post.setConfig(org.apache.hc.client5.http.config.RequestConfig.custom()
                    .setResponseTimeout(Timeout.ofMilliseconds(settings.connectTimeout().toMillis())).build());
            try {
                http.execute(post, answer -> {
                    org.apache.hc.core5.http.io.entity.EntityUtils.consume(answer.getEntity());
                    return answer.getCode();
                });
            } catch (IOException | RuntimeException e) {
                // the server is gone or does not listen: nothing runs there to cancel
            }
        };
        try {
            if (executor != null) {
                executor.execute(send);
            } else {
                CANCELS.execute(send);
            }
        } catch (java.util.concurrent.RejectedExecutionException e) {
            // the caller's executor is shut down: the server's deadline ends the call
        }
    }

    /** Sends cancel messages when the settings give no executor: one daemon thread, started when first needed. */
    private static final java.util.concurrent.ExecutorService CANCELS = java.util.concurrent.Executors
            .newSingleThreadExecutor(DaemonThreads.named("soap-cancel"));

    ClientSettings settings() {
        return settings;
    }

    ServiceClient borrow() throws AxisFault {
        if (closed) {
            throw new IllegalStateException("SOAP client is closed");
        }
        ServiceClient sc = idle.pollFirst();
        if (sc == null) {
            sc = new ServiceClient(context, null);
            Options o = sc.getOptions();
            o.setProperty(HTTPConstants.CACHED_HTTP_CLIENT, http);
            o.setProperty(HTTPConstants.CONNECTION_TIMEOUT, (int) settings.connectTimeout().toMillis());
            o.setCallTransportCleanup(false);
        }
        return sc;
    }

    void release(ServiceClient sc) {
        if (closed) {
            cleanup(sc);
        } else {
            idle.offerFirst(sc);
        }
    }

    private static void cleanup(ServiceClient sc) {
        try {
            sc.cleanup();
        } catch (AxisFault ignored) {
            // closing anyway
        }
    }

    @Override
    public void close() {
        closed = true;
        ServiceClient sc;
        while ((sc = idle.pollFirst()) != null) {
            cleanup(sc);
        }
        try {
            http.close();
        } catch (IOException ignored) {
            // closing anyway
        }
        try {
            context.terminate();
        } catch (AxisFault ignored) {
            // closing anyway
        }
    }
}
