package io.switchboard.protocol.soap;

import io.switchboard.protocol.Peer;
import io.switchboard.protocol.TokenVerifier;
import io.switchboard.protocol.spi.CallerIdentity;
import io.switchboard.protocol.spi.CertificatePrincipal;
import java.security.cert.Certificate;
import org.apache.axis2.context.MessageContext;

/**
 * Who makes a SOAP call: the HTTP side (Jetty's request, or Axis2's servlet) records the client
 * certificate's peer and the {@code Authorization} header on the message context; the operation's
 * receiver settles the caller from them ({@link CallerIdentity}) before the operation runs.
 */
final class SoapCallers {
    private static final String PEER = "switchboard.peer";
    private static final String AUTHORIZATION = "switchboard.authorization";
    private static final String TLS_SESSION = "switchboard.tlsSession";

    private SoapCallers() {
    }

    /**
     * Records what the connection proved ({@code chain}: its client certificates, null for none;
     * {@code session}: its TLS session, null for none) and the header.
     */
    static void record(MessageContext mc, Certificate[] chain, javax.net.ssl.SSLSession session, String remoteAddress,
                       String authorization) {
        mc.setProperty(PEER, transportPeer(chain, remoteAddress));
        mc.setProperty(TLS_SESSION, session);
        mc.setProperty(AUTHORIZATION, authorization);
    }

    /** What the connection proved: the client certificate's principal, else an anonymous peer at its address. */
    static Peer transportPeer(Certificate[] chain, String remoteAddress) {
        String principal = CertificatePrincipal.of(chain);
        return principal == null ? Peer.anonymous(remoteAddress)
                : Peer.of(principal, Peer.Authentication.MUTUAL_TLS, remoteAddress);
    }

    /**
     * Who sent an HTTP request that is not a SOAP call (a cancel, a mounted page's GET), settled
     * as a call's caller is: the client certificate, unless a bearer token verifies with
     * {@code verifier} (null: tokens are not looked at).
     */
    static CallerIdentity of(org.eclipse.jetty.server.Request request, TokenVerifier verifier) {
        Object tls = request.getAttribute(org.eclipse.jetty.io.EndPoint.SslSessionData.ATTRIBUTE);
        Peer transport = transportPeer(
                tls instanceof org.eclipse.jetty.io.EndPoint.SslSessionData ssl ? ssl.peerCertificates() : null,
                CallerIdentity.address(request.getConnectionMetaData().getRemoteSocketAddress()));
        return CallerIdentity.of(transport, CallerIdentity.bearer(
                request.getHeaders().get(org.eclipse.jetty.http.HttpHeader.AUTHORIZATION)), verifier);
    }

    /**
     * The caller of the call {@code mc} carries, its bearer token checked by {@code verifier}
     * (null: none), and refused if its connection's client certificate is no longer trusted by
     * {@code tls} (null: plain text).
     */
    static CallerIdentity of(MessageContext mc, TokenVerifier verifier, io.switchboard.protocol.TlsSettings tls) {
        Object peer = mc.getProperty(PEER);
        return CallerIdentity.of(peer instanceof Peer p ? p : Peer.UNKNOWN,
                CallerIdentity.bearer((String) mc.getProperty(AUTHORIZATION)), verifier)
                .unlessNoLongerTrusted(tls, session(mc));
    }

    /** The TLS session of the connection {@code mc} came on; null in plain text. */
    static javax.net.ssl.SSLSession session(MessageContext mc) {
        return mc.getProperty(TLS_SESSION) instanceof javax.net.ssl.SSLSession s ? s : null;
    }
}
