package io.switchboard.protocol.spi;

import io.switchboard.protocol.Peer;
import io.switchboard.protocol.PermissionDeniedException;
import io.switchboard.protocol.TlsSettings;
import io.switchboard.protocol.TokenVerifier;
import java.net.InetSocketAddress;
import java.net.SocketAddress;
import javax.net.ssl.SSLSession;

/**
 * Who made a call, as a protocol server settles it before the operation runs: the peer its
 * transport proved (a client certificate, a Unix socket's uid, nothing), unless the call carried a
 * bearer token, which wins once verified. A token that does not verify is never downgraded to the
 * transport's peer: the call is refused ({@link #checkVerified()}) with
 * {@link PermissionDeniedException#unauthenticated}. The one place every server decides this. SPI.
 *
 * <pre>{@code
 * CallerIdentity caller = CallerIdentity.of(CallerIdentity.tlsPeer(session, remote),
 *         CallerIdentity.bearer(headers.get("authorization")), settings.tokenVerifier());
 * ServerCallContext context = ServerCallContext.create(deadline, trace, caller.peer());
 * try (var scope = context.enter()) {
 *     caller.checkVerified();   // before the operation: its refusal takes the call's error path
 *     return skeleton.invoke(op, request, callId);
 * }
 * }</pre>
 *
 * @param peer    the peer to give the call (the transport's when the token did not verify)
 * @param refusal why the call's token did not verify; null when the call may go on
 */
public record CallerIdentity(Peer peer, PermissionDeniedException refusal) {
    /** Why a caller whose TLS client chain was trusted when its connection began is refused now. */
    public static final String NO_LONGER_TRUSTED =
            "the client certificate of this connection is no longer trusted (revoked, or its authority withdrawn)";

    private static final String BEARER = "bearer ";
    /** What a value carrying no usable token reads as: refused, never taken as no token. */
    static final String MALFORMED = "\0malformed";

    /**
     * The caller of a call that arrived from {@code transport} carrying {@code token} (null: none),
     * checked by {@code verifier} (null: tokens are not looked at, the transport's peer stands).
     */
    public static CallerIdentity of(Peer transport, String token, TokenVerifier verifier) {
        if (token == null || verifier == null) {
            return new CallerIdentity(transport, null);
        }
        if (MALFORMED.equals(token)) {
            return new CallerIdentity(transport, PermissionDeniedException.unauthenticated(null,
                    "the authorization header is not a bearer token"));
        }
        try {
            String principal = verifier.verify(token);
            return new CallerIdentity(Peer.of(principal, Peer.Authentication.TOKEN, transport.remoteAddress()), null);
        } catch (PermissionDeniedException e) {
            return new CallerIdentity(transport, e);
        } catch (RuntimeException e) {
            // a verifier's own failure must not let the call through: refused, its message kept
            // (verifiers do not put tokens in messages)
            return new CallerIdentity(transport, PermissionDeniedException.unauthenticated(null,
                    "the bearer token could not be verified: " + e.getClass().getSimpleName()));
        }
    }

    /**
     * This caller, refused unless the client chain of its connection ({@code session}) is still
     * trusted by {@code tls} ({@link TlsSettings#stillTrusts}): a caller revoked, or of an authority
     * withdrawn, while its connection stayed open. The refusal wins over a verified token: the
     * connection itself is no longer admitted. Null {@code tls} or {@code session}: this caller.
     */
    public CallerIdentity unlessNoLongerTrusted(TlsSettings tls, SSLSession session) {
        if (tls == null || session == null || tls.stillTrusts(session)) {
            return this;
        }
        return new CallerIdentity(peer, PermissionDeniedException.unauthenticated(null, NO_LONGER_TRUSTED));
    }

    /** Throws the refusal when the call's token did not verify; the operation must not run then. */
    public void checkVerified() {
        if (refusal != null) {
            throw refusal;
        }
    }

    /**
     * The token of an HTTP or gRPC {@code authorization} value ({@code Bearer <token>}); null for
     * no value. Any other value (another scheme, an empty token) is a token that cannot verify.
     */
    public static String bearer(String authorization) {
        if (authorization == null) {
            return null;
        }
        String v = authorization.strip();
        if (v.length() <= BEARER.length() || !v.regionMatches(true, 0, BEARER, 0, BEARER.length())) {
            return MALFORMED;
        }
        String token = v.substring(BEARER.length()).strip();
        return token.isEmpty() || token.indexOf(' ') >= 0 ? MALFORMED : token;
    }

    /**
     * The peer a TLS (or plain) connection proves: {@link Peer.Authentication#MUTUAL_TLS} with the
     * client certificate's principal ({@link CertificatePrincipal}), anonymous without one.
     */
    public static Peer tlsPeer(SSLSession session, SocketAddress remote) {
        String address = address(remote);
        String principal = CertificatePrincipal.of(session);
        return principal == null ? Peer.anonymous(address) : Peer.of(principal, Peer.Authentication.MUTUAL_TLS, address);
    }

    /** {@code 127.0.0.1:53122}, {@code [::1]:53122}, or the address's own form (a socket path); null for null. */
    public static String address(SocketAddress remote) {
        if (remote == null) {
            return null;
        }
        if (remote instanceof InetSocketAddress inet && inet.getAddress() != null) {
            String host = inet.getAddress().getHostAddress();
            int scope = host.indexOf('%');   // no pattern: this runs on every call
            if (scope >= 0) {
                host = host.substring(0, scope);
            }
            return (host.indexOf(':') >= 0 ? "[" + compressed(host) + "]" : host) + ":" + inet.getPort();
        }
        return remote.toString();
    }

    /** {@code 0:0:0:0:0:0:0:1} as {@code ::1}: the longest run of two or more zero groups as {@code ::} (RFC 5952). */
    private static String compressed(String ipv6) {
        String[] groups = ipv6.split(":", -1);
        int bestStart = -1;
        int bestLength = 1;
        for (int i = 0; i < groups.length; ) {
            int j = i;
            while (j < groups.length && groups[j].equals("0")) {
                j++;
            }
            if (j - i > bestLength) {
                bestStart = i;
                bestLength = j - i;
            }
            i = Math.max(j, i + 1);
        }
        if (bestStart < 0) {
            return ipv6;
        }
        String head = String.join(":", java.util.Arrays.copyOfRange(groups, 0, bestStart));
        String tail = String.join(":", java.util.Arrays.copyOfRange(groups, bestStart + bestLength, groups.length));
        return head + "::" + tail;
    }
}
