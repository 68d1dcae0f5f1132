package io.switchboard.testing.identity;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.switchboard.protocol.PermissionDeniedException;
import io.switchboard.protocol.spi.JwtTokenVerifier;
import io.switchboard.testing.TestTokens;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class JwtTokenVerifierTest {
    private final TestTokens tokens = TestTokens.get();

    @Test
    void aValidTokenProvesItsSubject() {
        assertEquals("alice", tokens.verifier().verify(tokens.valid("alice")));
    }

    @Test
    void pemPublicKeysVerifyTheSameTokens() {
        JwtTokenVerifier pem = JwtTokenVerifier.builder().pemPublicKeys(tokens.pemFile())
                .issuer(TestTokens.ISSUER).audience(TestTokens.AUDIENCE).build();
        assertEquals("bob", pem.verify(tokens.valid("bob")));
    }

    @Test
    void anotherClaimCanNameThePrincipal() {
        JwtTokenVerifier byIssuer = JwtTokenVerifier.builder().jwks(tokens.jwksFile()).issuer(TestTokens.ISSUER)
                .audience(TestTokens.AUDIENCE).principalClaim("iss").build();
        assertEquals(TestTokens.ISSUER, byIssuer.verify(tokens.valid("carol")));
    }

    @Test
    void everyHostileTokenIsRefusedAsUnauthenticatedWithoutTheTokenInItsMessage() {
        JwtTokenVerifier verifier = tokens.verifier();
        Map<String, String> hostile = tokens.hostile("mallory");
        assertEquals(8, hostile.size());
        hostile.forEach((what, token) -> {
            PermissionDeniedException e = assertThrows(PermissionDeniedException.class, () -> verifier.verify(token),
                    what);
            assertTrue(e.unauthenticated(), what);
            assertFalse(e.getMessage().contains(token), what + ": the message holds the token");
        });
    }

    @Test
    void aTokenWithinTheClockSkewOfItsExpiryStillVerifiesAndOneWithoutSkewDoesNot() {
        // the expired token expired 50 minutes ago: a skew of an hour takes it, none refuses it
        String expired = tokens.hostile("dave").get("expired");
        JwtTokenVerifier lenient = JwtTokenVerifier.builder().jwks(tokens.jwksFile()).issuer(TestTokens.ISSUER)
                .audience(TestTokens.AUDIENCE).clockSkew(java.time.Duration.ofHours(1)).build();
        assertEquals("dave", lenient.verify(expired));
        assertThrows(PermissionDeniedException.class, () -> tokens.verifier().verify(expired));
    }

    @Test
    void aVerifierWithoutKeysOrAudienceIsNotBuilt() {
        assertThrows(IllegalArgumentException.class, () -> JwtTokenVerifier.builder().audience("a").build());
        assertThrows(IllegalArgumentException.class, () -> JwtTokenVerifier.builder().jwks(tokens.jwksFile()).build());
    }

    @Test
    void aJwksWithAPrivateOrSymmetricKeyIsRefused() {
        String secret = "{\"keys\":[{\"kty\":\"oct\",\"k\":\"c2VjcmV0LXNlY3JldC1zZWNyZXQtc2VjcmV0LXNlY3JldA\"}]}";
        assertThrows(IllegalArgumentException.class, () -> JwtTokenVerifier.builder().jwks(secret));
        assertThrows(IllegalArgumentException.class, () -> JwtTokenVerifier.builder().jwks("{not json"));
    }

    @Test
    void aPemFileWithoutPublicKeysIsRefused(@TempDir Path dir) throws Exception {
        Path empty = Files.writeString(dir.resolve("empty.pem"), "-----BEGIN CERTIFICATE-----\nAAAA\n-----END CERTIFICATE-----\n");
        assertThrows(IllegalArgumentException.class, () -> JwtTokenVerifier.builder().pemPublicKeys(empty));
    }
}
