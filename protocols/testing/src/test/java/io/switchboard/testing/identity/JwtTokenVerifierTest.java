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
import java.time.Duration;
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
    void aKeyAddedToTheJwksFileIsTakenWithoutARestartAndARemovedOneIsNoLonger(@TempDir Path dir) throws Exception {
        Path file = dir.resolve("jwks.json");
        JwtTokenVerifier verifier = issuersKeyIn(file, Duration.ofMillis(50));
        String rotated = tokens.validFromOtherKey("dave");
        assertEquals("alice", verifier.verify(tokens.valid("alice")));
        assertThrows(PermissionDeniedException.class, () -> verifier.verify(rotated), "no key of its kid yet");

        Files.writeString(file, tokens.jwks(true, true));   // the new key beside the old one
        awaitTrue(() -> verifies(verifier, rotated), "the added key is taken");
        assertEquals("alice", verifier.verify(tokens.valid("alice")));

        Files.writeString(file, tokens.jwks(false, true));   // the old key withdrawn
        String old = tokens.valid("alice");
        awaitTrue(() -> !verifies(verifier, old), "the removed key is no longer taken");
        assertEquals("dave", verifier.verify(rotated));
    }

    @Test
    void aKeyFileBrokenTooLargeOrGoneLeavesTheKeysReadBefore(@TempDir Path dir) throws Exception {
        Path file = dir.resolve("jwks.json");
        JwtTokenVerifier verifier = issuersKeyIn(file, Duration.ofMillis(20));
        String token = tokens.valid("alice");
        Map<String, Runnable> breakings = new java.util.LinkedHashMap<>();
        breakings.put("not JSON", () -> write(file, "{\"keys\": [{\"kty\""));
        breakings.put("no keys", () -> write(file, "{\"keys\": []}"));
        breakings.put("a private key", () -> write(file, tokens.jwks(true, false).replace("}]", ",\"d\":\"AQAB\"}]")));
        breakings.put("over 1 MiB", () -> write(file, " ".repeat((1 << 20) + 1) + tokens.jwks(false, true)));
        breakings.put("gone", () -> {
            try {
                Files.delete(file);
            } catch (java.io.IOException e) {
                throw new java.io.UncheckedIOException(e);
            }
        });
        for (Map.Entry<String, Runnable> broken : breakings.entrySet()) {
            broken.getValue().run();
            long reads = verifier.keyFileReads();
            awaitTrue(() -> {
                verifies(verifier, token);
                return verifier.keyFileReads() >= reads + 2;   // read again, twice, since it broke
            }, broken.getKey() + ": read again");
            assertEquals("alice", verifier.verify(token), broken.getKey() + ": the keys read before stay");
        }
    }

    @Test
    void tokensNamingUnknownKeysHaveTheFileReadAtMostOnceASecond() {
        JwtTokenVerifier verifier = JwtTokenVerifier.builder().jwks(tokens.jwksFile()).issuer(TestTokens.ISSUER)
                .audience(TestTokens.AUDIENCE).build();
        String unknown = tokens.validFromOtherKey("mallory");
        long start = System.nanoTime();
        for (int i = 0; i < 2_000; i++) {
            assertThrows(PermissionDeniedException.class, () -> verifier.verify(unknown));
        }
        long seconds = java.util.concurrent.TimeUnit.NANOSECONDS.toSeconds(System.nanoTime() - start);
        assertTrue(verifier.keyFileReads() <= 2 + seconds, verifier.keyFileReads() + " reads in " + seconds + " s");
        assertTrue(verifier.keyFileReads() >= 1, "read once at build");
    }

    @Test
    void aTokenSentAgainIsNotCheckedAgainButIsStillHeldToItsExpiry() throws Exception {
        JwtTokenVerifier verifier = JwtTokenVerifier.builder().jwks(tokens.jwksFile()).issuer(TestTokens.ISSUER)
                .audience(TestTokens.AUDIENCE).clockSkew(Duration.ZERO).build();
        String token = tokens.valid("alice");
        for (int i = 0; i < 3; i++) {
            assertEquals("alice", verifier.verify(token));
        }
        assertEquals(1, verifier.signatureChecks(), "one check for the same token three times");
        assertEquals("bob", verifier.verify(tokens.valid("bob")));
        assertEquals(2, verifier.signatureChecks());

        // the same claims with another signature is another token: checked, and refused
        String other = tokens.validFromOtherKey("alice");
        String forged = token.substring(0, token.lastIndexOf('.') + 1) + other.substring(other.lastIndexOf('.') + 1);
        assertThrows(PermissionDeniedException.class, () -> verifier.verify(forged));
        assertEquals(3, verifier.signatureChecks());
        assertEquals("alice", verifier.verify(token));
        assertEquals(3, verifier.signatureChecks(), "the forgery left the remembered token as it was");

        // a short-lived token, remembered, then past its exp (no skew): refused all the same
        String brief = tokens.validFor("carol", Duration.ofSeconds(3));
        assertEquals("carol", verifier.verify(brief));
        assertEquals("carol", verifier.verify(brief));
        assertEquals(4, verifier.signatureChecks());
        long expires = com.nimbusds.jwt.SignedJWT.parse(brief).getJWTClaimsSet().getExpirationTime().getTime();
        long left = expires - System.currentTimeMillis();
        if (left >= 0) {
            Thread.sleep(left + 1);   // a time to pass, not an event to wait for
        }
        PermissionDeniedException e = assertThrows(PermissionDeniedException.class, () -> verifier.verify(brief),
                "remembered, and expired all the same");
        assertTrue(e.getMessage().contains("xpired"), e.getMessage());
    }

    @Test
    void aRememberedTokenIsCheckedAgainOnceTheKeysChangeAndRefusedWhenItsKeyIsGone(@TempDir Path dir) throws Exception {
        Path file = dir.resolve("jwks.json");
        Files.writeString(file, tokens.jwks(true, true));
        JwtTokenVerifier verifier = JwtTokenVerifier.builder().jwks(file).issuer(TestTokens.ISSUER)
                .audience(TestTokens.AUDIENCE).recheckKeysEvery(Duration.ofMillis(50)).build();
        String rotated = tokens.validFromOtherKey("dave");
        String alice = tokens.valid("alice");
        assertEquals("dave", verifier.verify(rotated));
        assertEquals("alice", verifier.verify(alice));
        assertEquals("dave", verifier.verify(rotated));
        assertEquals(2, verifier.signatureChecks());

        Files.writeString(file, tokens.jwks(true, false));   // the other key withdrawn
        awaitTrue(() -> !verifies(verifier, rotated), "a remembered token whose key is gone is refused");
        long checks = verifier.signatureChecks();
        assertEquals("alice", verifier.verify(alice));
        assertEquals(checks + 1, verifier.signatureChecks(), "checked again under the new keys, once");
        assertEquals("alice", verifier.verify(alice));
        assertEquals(checks + 1, verifier.signatureChecks());
    }

    @Test
    void atMostTheConfiguredNumberOfTokensIsRememberedAndNoneWithZero() {
        JwtTokenVerifier two = JwtTokenVerifier.builder().jwks(tokens.jwksFile()).issuer(TestTokens.ISSUER)
                .audience(TestTokens.AUDIENCE).rememberVerified(2).build();
        String a = tokens.valid("a");
        String b = tokens.valid("b");
        String c = tokens.valid("c");
        for (String t : new String[] {a, b, a, b, c, a}) {
            two.verify(t);
        }
        assertEquals(4, two.signatureChecks(), "a and b remembered; c came to a full memo, and a was checked again");

        JwtTokenVerifier none = JwtTokenVerifier.builder().jwks(tokens.jwksFile()).issuer(TestTokens.ISSUER)
                .audience(TestTokens.AUDIENCE).rememberVerified(0).build();
        for (int i = 0; i < 3; i++) {
            assertEquals("a", none.verify(a));
        }
        assertEquals(3, none.signatureChecks());
        assertThrows(IllegalArgumentException.class, () -> JwtTokenVerifier.builder().rememberVerified(-1));
    }

    /** A verifier of the keys in {@code file}, which now holds the issuer's key, read again every {@code recheck}. */
    private JwtTokenVerifier issuersKeyIn(Path file, Duration recheck) throws java.io.IOException {
        Files.writeString(file, tokens.jwks(true, false));
        return JwtTokenVerifier.builder().jwks(file).issuer(TestTokens.ISSUER).audience(TestTokens.AUDIENCE)
                .recheckKeysEvery(recheck).build();
    }

    private static boolean verifies(JwtTokenVerifier verifier, String token) {
        try {
            verifier.verify(token);
            return true;
        } catch (PermissionDeniedException e) {
            return false;
        }
    }

    private static void write(Path file, String text) {
        try {
            Files.writeString(file, text);
        } catch (java.io.IOException e) {
            throw new java.io.UncheckedIOException(e);
        }
    }

    /** Waits for {@code condition}, looking every few milliseconds, for at most 10 s. */
    private static void awaitTrue(java.util.function.BooleanSupplier condition, String what) throws InterruptedException {
        long deadline = System.nanoTime() + java.util.concurrent.TimeUnit.SECONDS.toNanos(10);
        while (!condition.getAsBoolean()) {
            assertTrue(System.nanoTime() < deadline, what + " within 10 s");
            Thread.sleep(5);
        }
    }

    @Test
    void aPemFileWithoutPublicKeysIsRefused(@TempDir Path dir) throws Exception {
        Path empty = Files.writeString(dir.resolve("empty.pem"), "-----BEGIN CERTIFICATE-----\nAAAA\n-----END CERTIFICATE-----\n");
        assertThrows(IllegalArgumentException.class, () -> JwtTokenVerifier.builder().pemPublicKeys(empty));
    }
}
