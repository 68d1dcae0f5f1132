package io.switchboard.protocol.tcp;

import io.netty.handler.ssl.SslHandler;
import io.switchboard.protocol.TlsSettings;
import java.io.IOException;
import java.net.Socket;
import java.net.URI;
import java.security.NoSuchAlgorithmException;
import javax.net.ssl.SSLContext;
import javax.net.ssl.SSLEngine;
import javax.net.ssl.SSLParameters;
import javax.net.ssl.SSLSocket;

/**
 * {@link TlsSettings} as a server's Netty {@link SslHandler} and a client's {@link SSLSocket} (the
 * JDK's TLS both: nothing native), and the
 * endpoint form that says TLS: a server with TLS publishes {@code tcps://HOST:PORT/Component}
 * (plain text: {@code tcp://}), and a client speaks TLS to a {@code tcps} endpoint and only to it,
 * checking the server's name against its certificate. A server whose settings hold a trust store
 * requires a client certificate it trusts.
 */
final class TcpTls {
    static final String PLAIN_SCHEME = "tcp";
    static final String TLS_SCHEME = "tcps";

    private TcpTls() {
    }

    static String scheme(TlsSettings tls) {
        return tls == null ? PLAIN_SCHEME : TLS_SCHEME;
    }

    /** Whether {@code uri} is a tcp endpoint's: either scheme, a host and a port. */
    static boolean isEndpoint(URI uri) {
        return (PLAIN_SCHEME.equals(uri.getScheme()) || TLS_SCHEME.equals(uri.getScheme())) && uri.getHost() != null
                && uri.getPort() > 0;
    }

    static SslHandler server(TlsSettings tls) {
        SSLEngine engine = tls.checkServable().context().createSSLEngine();
        engine.setUseClientMode(false);
        if (tls.requiresTrustedPeer()) {
            engine.setNeedClientAuth(true);
        }
        return new SslHandler(engine);
    }

    /**
     * A client's TLS over a connected {@code socket} to a {@code tcps} endpoint at {@code host:port}:
     * the settings' trust (else the JVM's) and key; the server's name checked against its certificate.
     */
    static SSLSocket client(TlsSettings tls, Socket socket, String host, int port) throws IOException {
        SSLContext context;
        try {
            context = tls != null ? tls.context() : SSLContext.getDefault();
        } catch (NoSuchAlgorithmException e) {
            throw new IllegalStateException("no TLS in this JVM", e);
        }
        SSLSocket ssl = (SSLSocket) context.getSocketFactory().createSocket(socket, host, port, true);
        ssl.setUseClientMode(true);
        SSLParameters params = ssl.getSSLParameters();
        params.setEndpointIdentificationAlgorithm("HTTPS");
        ssl.setSSLParameters(params);
        return ssl;
    }
}
