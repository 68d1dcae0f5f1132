package io.switchboard.testing;

import com.nimbusds.jose.JOSEException;
import com.nimbusds.jose.JWSAlgorithm;
import com.nimbusds.jose.JWSHeader;
import com.nimbusds.jose.crypto.MACSigner;
import com.nimbusds.jose.crypto.RSASSASigner;
import com.nimbusds.jose.jwk.RSAKey;
import com.nimbusds.jwt.JWTClaimsSet;
import com.nimbusds.jwt.PlainJWT;
import com.nimbusds.jwt.SignedJWT;
import io.switchboard.protocol.spi.JwtTokenVerifier;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.GeneralSecurityException;
import java.security.KeyPair;
import java.security.KeyPairGenerator;
import java.security.interfaces.RSAPrivateKey;
import java.security.interfaces.RSAPublicKey;
import java.time.Duration;
import java.time.Instant;
import java.util.Base64;
import java.util.Date;
import java.util.LinkedHashMap;
import java.util.Map;

/**
 * JWTs for identity tests: an issuer's RSA key (made once per JVM, its public half written as a
 * JWKS file and a PEM file), valid tokens for any subject, and the hostile tokens a server must
 * refuse: expired, not yet valid, another issuer, another audience, a bad signature,
 * {@code alg: none}, an HMAC token keyed with the issuer's public key, garbage.
 *
 * <pre>{@code
 * TestTokens tokens = TestTokens.get();
 * ServerSettings server = ServerSettings.defaults().withTokenVerifier(tokens.verifier());
 * ClientSettings client = ClientSettings.defaults().withToken(() -> tokens.valid("alice"));
 * }</pre>
 */
public final class TestTokens {
    public static final String ISSUER = "https://issuer.switchboard.test";
    public static final String AUDIENCE = "switchboard-test";
    private static TestTokens instance;

    private final RSAKey key;
    private final RSAKey otherKey;
    private final Path jwks;
    private final Path pem;

    private TestTokens(RSAKey key, RSAKey otherKey, Path jwks, Path pem) {
        this.key = key;
        this.otherKey = otherKey;
        this.jwks = jwks;
        this.pem = pem;
    }

    /** The tokens of this JVM, their keys made on first use. */
    public static synchronized TestTokens get() {
        if (instance == null) {
            try {
                RSAKey key = rsa("issuer");
                Path dir = Files.createTempDirectory("switchboard-jwt-");
                Path jwks = dir.resolve("jwks.json");
                Files.writeString(jwks, new com.nimbusds.jose.jwk.JWKSet(key.toPublicJWK()).toString(),
                        StandardCharsets.UTF_8);
                Path pem = dir.resolve("issuer.pem");
                Files.writeString(pem, "-----BEGIN PUBLIC KEY-----\n"
                        + Base64.getMimeEncoder(64, "\n".getBytes(StandardCharsets.US_ASCII))
                        .encodeToString(key.toRSAPublicKey().getEncoded()) + "\n-----END PUBLIC KEY-----\n");
                dir.toFile().deleteOnExit();
                jwks.toFile().deleteOnExit();
                pem.toFile().deleteOnExit();
                instance = new TestTokens(key, rsa("other"), jwks, pem);
            } catch (IOException e) {
                throw new UncheckedIOException(e);
            } catch (GeneralSecurityException | JOSEException e) {
                throw new IllegalStateException("cannot make the test issuer's key", e);
            }
        }
        return instance;
    }

    /** The issuer's public key as a JWKS file. */
    public Path jwksFile() {
        return jwks;
    }

    /** The issuer's public key as a PEM {@code PUBLIC KEY} file. */
    public Path pemFile() {
        return pem;
    }

    /** A verifier of this issuer's tokens for {@link #AUDIENCE}, keys from the JWKS file. */
    public JwtTokenVerifier verifier() {
        return JwtTokenVerifier.builder().jwks(jwks).issuer(ISSUER).audience(AUDIENCE).build();
    }

    /** A token for {@code subject}, valid for ten minutes. */
    public String valid(String subject) {
        return validFor(subject, Duration.ofMinutes(10));
    }

    /** A token for {@code subject} that expires {@code life} from now (JWT times are whole seconds: up to a second sooner). */
    public String validFor(String subject, Duration life) {
        return sign(key, claims(subject, ISSUER, AUDIENCE, Instant.now().minusSeconds(5), life.plusSeconds(5)));
    }

    /** A token for {@code subject}, valid for ten minutes, signed by the issuer's other key ({@code kid} "other"). */
    public String validFromOtherKey(String subject) {
        return sign(otherKey, claims(subject, ISSUER, AUDIENCE, Instant.now().minusSeconds(5), Duration.ofMinutes(10)));
    }

    /** A JWKS document of the public halves of the issuer's key, its other key, or both. */
    public String jwks(boolean issuerKey, boolean otherKey) {
        java.util.List<com.nimbusds.jose.jwk.JWK> keys = new java.util.ArrayList<>();
        if (issuerKey) {
            keys.add(key.toPublicJWK());
        }
        if (otherKey) {
            keys.add(this.otherKey.toPublicJWK());
        }
        return new com.nimbusds.jose.jwk.JWKSet(keys).toString();
    }

    /**
     * The tokens a server must refuse, by what is wrong with them; each names {@code subject} and
     * would verify but for that.
     */
    public Map<String, String> hostile(String subject) {
        Instant now = Instant.now();
        Map<String, String> tokens = new LinkedHashMap<>();
        // past the 60 s skew each way
        tokens.put("expired", sign(key, claims(subject, ISSUER, AUDIENCE, now.minusSeconds(3600), Duration.ofMinutes(10))));
        tokens.put("not yet valid", sign(key, claims(subject, ISSUER, AUDIENCE, now.plusSeconds(600), Duration.ofMinutes(10))));
        tokens.put("wrong issuer", sign(key, claims(subject, "https://elsewhere.test", AUDIENCE, now, Duration.ofMinutes(10))));
        tokens.put("wrong audience", sign(key, claims(subject, ISSUER, "another-service", now, Duration.ofMinutes(10))));
        tokens.put("bad signature", sign(otherKey, claims(subject, ISSUER, AUDIENCE, now, Duration.ofMinutes(10))));
        tokens.put("alg none", new PlainJWT(claims(subject, ISSUER, AUDIENCE, now, Duration.ofMinutes(10))).serialize());
        tokens.put("HMAC keyed with the public key", hmacWithPublicKey(claims(subject, ISSUER, AUDIENCE, now,
                Duration.ofMinutes(10))));
        tokens.put("garbage", "not.a-jwt");
        return tokens;
    }

    private static JWTClaimsSet claims(String subject, String issuer, String audience, Instant notBefore,
                                       Duration life) {
        return new JWTClaimsSet.Builder().subject(subject).issuer(issuer).audience(audience)
                .notBeforeTime(Date.from(notBefore)).issueTime(Date.from(notBefore))
                .expirationTime(Date.from(notBefore.plus(life))).build();
    }

    private static String sign(RSAKey signer, JWTClaimsSet claims) {
        try {
            SignedJWT jwt = new SignedJWT(new JWSHeader.Builder(JWSAlgorithm.RS256).keyID(signer.getKeyID()).build(),
                    claims);
            jwt.sign(new RSASSASigner(signer));
            return jwt.serialize();
        } catch (JOSEException e) {
            throw new IllegalStateException(e);
        }
    }

    /** The classic key-confusion forgery: HS256 with the RSA public key's encoding as the shared secret. */
    private String hmacWithPublicKey(JWTClaimsSet claims) {
        try {
            SignedJWT jwt = new SignedJWT(new JWSHeader.Builder(JWSAlgorithm.HS256).keyID(key.getKeyID()).build(), claims);
            byte[] secret = Files.readAllBytes(pem);   // at least 256 bits, as HS256 needs
            jwt.sign(new MACSigner(secret));
            return jwt.serialize();
        } catch (JOSEException | IOException e) {
            throw new IllegalStateException(e);
        }
    }

    private static RSAKey rsa(String id) throws GeneralSecurityException {
        KeyPairGenerator g = KeyPairGenerator.getInstance("RSA");
        g.initialize(2048);
        KeyPair pair = g.generateKeyPair();
        return new RSAKey.Builder((RSAPublicKey) pair.getPublic()).privateKey((RSAPrivateKey) pair.getPrivate())
                .keyID(id).build();
    }
}
