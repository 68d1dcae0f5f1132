package io.switchboard.protocol;

/**
 * Verifies a bearer token a caller sent and names who it proves: a server configured with one
 * ({@link ServerSettings#withTokenVerifier}) gives a call with a verified token a
 * {@link Peer.Authentication#TOKEN} peer, and refuses a call whose token does not verify before
 * the operation runs. The JWT verifier of the protocol SPI ({@code JwtTokenVerifier}) is the
 * usual one. API.
 *
 * <pre>{@code
 * TokenVerifier jwt = JwtTokenVerifier.builder().jwks(Path.of("keys.json"))
 *         .issuer("https://issuer.example").audience("billing").build();
 * ServerSettings s = ServerSettings.defaults().withTokenVerifier(jwt);
 * }</pre>
 */
@FunctionalInterface
public interface TokenVerifier {
    /**
     * The principal {@code token} proves.
     *
     * @throws PermissionDeniedException ({@link PermissionDeniedException#unauthenticated}) when
     *         the token does not verify; its message never holds the token
     */
    String verify(String token);
}
