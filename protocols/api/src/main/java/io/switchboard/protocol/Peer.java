package io.switchboard.protocol;

import java.util.Objects;

/**
 * Who made a call, as the server established it: the principal, how it was established and where
 * the call came from. Every protocol server (SOAP, gRPC, tcp over TCP and the Unix socket, local)
 * and the registry's listeners give an operation, its interceptors and the authorization policy
 * the same value, read with {@link ServerCallContext#peer()} or {@link ServerCall#peer()}. API.
 *
 * <p>Principals by source: a client certificate gives its URI SAN (a SPIFFE ID) if it has one,
 * else its first DNS SAN, else its subject; a bearer token its verified {@code sub} (or the
 * configured claim); the Unix socket the peer's uid as {@code uid:1000}; the local protocol the
 * calling component's or client's name. An anonymous peer has no principal.
 *
 * <pre>{@code
 * ServerInterceptor audit = (call, next) -> {
 *     Peer peer = call.peer();
 *     LOG.info("{} by {} ({}) from {}", call, peer.principal(), peer.authentication(), peer.remoteAddress());
 *     return next.proceed(call);
 * };
 * }</pre>
 */
public final class Peer {
    /** How the server established a peer's identity. */
    public enum Authentication {
        /** A client certificate the server's trust store vouches for. */
        MUTUAL_TLS,
        /** A bearer token (a JWT) the server verified. */
        TOKEN,
        /** The uid of the process at the other end of a Unix socket ({@code SO_PEERCRED}). */
        UNIX_SOCKET,
        /** A call made in the same process, over the local protocol. */
        IN_PROCESS,
        /** Nothing: the caller proved no identity. */
        ANONYMOUS
    }

    /** An anonymous peer whose address is not known: outside of a call, or where a protocol cannot tell. */
    public static final Peer UNKNOWN = new Peer(null, Authentication.ANONYMOUS, null);

    private final String principal;
    private final Authentication authentication;
    private final String remoteAddress;

    private Peer(String principal, Authentication authentication, String remoteAddress) {
        this.principal = principal;
        this.authentication = authentication;
        this.remoteAddress = remoteAddress;
    }

    /**
     * A peer proved as {@code principal} by {@code authentication}, calling from {@code remoteAddress}
     * (null when not known). {@link Authentication#ANONYMOUS} takes no principal.
     */
    public static Peer of(String principal, Authentication authentication, String remoteAddress) {
        Objects.requireNonNull(authentication, "authentication");
        if (authentication == Authentication.ANONYMOUS) {
            if (principal != null) {
                throw new IllegalArgumentException("an anonymous peer has no principal");
            }
        } else if (principal == null || principal.isEmpty()) {
            throw new IllegalArgumentException(authentication + " needs a principal");
        }
        return new Peer(principal, authentication, remoteAddress);
    }

    /** An anonymous peer calling from {@code remoteAddress} (null when not known). */
    public static Peer anonymous(String remoteAddress) {
        return remoteAddress == null ? UNKNOWN : new Peer(null, Authentication.ANONYMOUS, remoteAddress);
    }

    /** The principal, e.g. {@code spiffe://example.org/team-a/billing}; null for an anonymous peer. */
    public String principal() {
        return principal;
    }

    public Authentication authentication() {
        return authentication;
    }

    /** Whether the caller proved an identity. */
    public boolean authenticated() {
        return authentication != Authentication.ANONYMOUS;
    }

    /** Where the call came from ({@code 127.0.0.1:53122}, {@code [::1]:53122}, a socket path); null when not known. */
    public String remoteAddress() {
        return remoteAddress;
    }

    /**
     * The identity as one string, the same for every call this peer makes whatever its address:
     * {@code MUTUAL_TLS:spiffe://...}, {@code TOKEN:alice}, {@code ANONYMOUS}. What per-identity
     * state (de-duplication, shares, denial counts) is keyed by.
     */
    public String identity() {
        return principal == null ? authentication.name() : authentication.name() + ":" + principal;
    }

    /** A copy with another remote address. */
    public Peer withRemoteAddress(String address) {
        return new Peer(principal, authentication, address);
    }

    @Override
    public boolean equals(Object o) {
        return o instanceof Peer p && Objects.equals(principal, p.principal) && authentication == p.authentication
                && Objects.equals(remoteAddress, p.remoteAddress);
    }

    @Override
    public int hashCode() {
        return Objects.hash(principal, authentication, remoteAddress);
    }

    @Override
    public String toString() {
        return principal == null ? "anonymous" + (remoteAddress == null ? "" : "@" + remoteAddress)
                : principal + " (" + authentication + (remoteAddress == null ? "" : ", " + remoteAddress) + ")";
    }
}
