package io.switchboard.protocol.spi;

import com.nimbusds.jose.JOSEException;
import com.nimbusds.jose.JWSAlgorithm;
import com.nimbusds.jose.jwk.ECKey;
import com.nimbusds.jose.jwk.JWK;
import com.nimbusds.jose.JWSHeader;
import com.nimbusds.jose.KeySourceException;
import com.nimbusds.jose.jwk.JWKSet;
import com.nimbusds.jose.jwk.KeyType;
import com.nimbusds.jose.jwk.RSAKey;
import com.nimbusds.jose.proc.BadJOSEException;
import com.nimbusds.jose.proc.JWSKeySelector;
import com.nimbusds.jose.proc.SecurityContext;
import com.nimbusds.jwt.JWTClaimsSet;
import com.nimbusds.jwt.proc.DefaultJWTClaimsVerifier;
import com.nimbusds.jwt.proc.DefaultJWTProcessor;
import io.switchboard.protocol.PermissionDeniedException;
import io.switchboard.protocol.TokenVerifier;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.GeneralSecurityException;
import java.security.Key;
import java.security.KeyFactory;
import java.security.PublicKey;
import java.security.interfaces.ECPublicKey;
import java.security.interfaces.RSAPublicKey;
import java.security.spec.X509EncodedKeySpec;
import java.text.ParseException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Base64;
import java.util.List;
import java.util.Objects;
import java.util.Set;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * Verifies JWT bearer tokens with nimbus-jose-jwt: the signature against public keys (a JWKS
 * file or PEM {@code PUBLIC KEY} blocks; RSA or EC), the issuer, the audience, and
 * {@code exp} and {@code nbf} with a clock skew (60 s by default). The principal is {@code sub},
 * or another claim when configured. Only the signature algorithms of the keys' own types are
 * taken, so an unsigned token ({@code alg: none}) or an HMAC token made with a public key as its
 * secret never verifies. A token is never written into a message or a log. SPI.
 *
 * <pre>{@code
 * TokenVerifier jwt = JwtTokenVerifier.builder()
 *         .jwks(Path.of("/etc/switchboard/jwks.json"))        // or .pemPublicKeys(Path.of("issuer.pem"))
 *         .issuer("https://issuer.example").audience("switchboard")
 *         .build();
 * ComponentServer server = ... ServerSettings.defaults().withTls(tls).withTokenVerifier(jwt) ...;
 * }</pre>
 */
public final class JwtTokenVerifier implements TokenVerifier {
    private static final Pattern PEM = Pattern.compile(
            "-----BEGIN PUBLIC KEY-----([A-Za-z0-9+/=\\s]+)-----END PUBLIC KEY-----");

    private final DefaultJWTProcessor<SecurityContext> processor;
    private final String principalClaim;
    private final String description;

    private JwtTokenVerifier(Builder b) {
        processor = new DefaultJWTProcessor<>();
        processor.setJWSKeySelector(new KeySelector(List.copyOf(b.keys)));
        DefaultJWTClaimsVerifier<SecurityContext> claims = new DefaultJWTClaimsVerifier<>(
                b.audience == null ? null : Set.of(b.audience),
                b.issuer == null ? null : new JWTClaimsSet.Builder().issuer(b.issuer).build(),
                Set.of("exp", b.principalClaim), null);
        claims.setMaxClockSkew((int) Math.min(Integer.MAX_VALUE, b.clockSkew.toSeconds()));
        processor.setJWTClaimsSetVerifier(claims);
        principalClaim = b.principalClaim;
        description = "JWT verifier (" + b.keys.size() + " keys, issuer " + b.issuer + ", audience " + b.audience
                + ", principal " + principalClaim + ")";
    }

    public static Builder builder() {
        return new Builder();
    }

    @Override
    public String verify(String token) {
        JWTClaimsSet claims;
        try {
            claims = processor.process(token, null);
        } catch (ParseException e) {
            throw PermissionDeniedException.unauthenticated(null, "the bearer token is not a JWT");
        } catch (BadJOSEException e) {
            // nimbus's messages name the failed check (expired, audience, signature), never the token
            throw PermissionDeniedException.unauthenticated(null, "the bearer token does not verify: "
                    + e.getMessage());
        } catch (JOSEException e) {
            throw PermissionDeniedException.unauthenticated(null, "the bearer token could not be verified: "
                    + e.getMessage());
        }
        Object principal = claims.getClaim(principalClaim);
        if (!(principal instanceof String p) || p.isBlank()) {
            throw PermissionDeniedException.unauthenticated(null, "the bearer token's " + principalClaim
                    + " claim is not a name");
        }
        return p;
    }

    @Override
    public String toString() {
        return description;
    }

    /**
     * The keys that may have signed a token: of the family of its algorithm (RSA keys for RS and
     * PS, EC keys for ES; never HMAC or none), and of its {@code kid} when both name one (PEM keys
     * name none and are tried for every token).
     */
    private record KeySelector(List<JWK> keys) implements JWSKeySelector<SecurityContext> {
        @Override
        public List<? extends Key> selectJWSKeys(JWSHeader header, SecurityContext context) throws KeySourceException {
            JWSAlgorithm alg = header.getAlgorithm();
            KeyType type = JWSAlgorithm.Family.RSA.contains(alg) ? KeyType.RSA
                    : JWSAlgorithm.Family.EC.contains(alg) ? KeyType.EC : null;
            List<Key> selected = new ArrayList<>();
            if (type == null) {
                return selected;   // nimbus then refuses the token: no key for its algorithm
            }
            for (JWK key : keys) {
                if (!type.equals(key.getKeyType())
                        || (key.getAlgorithm() != null && !key.getAlgorithm().equals(alg))
                        || (key.getKeyID() != null && header.getKeyID() != null
                            && !key.getKeyID().equals(header.getKeyID()))) {
                    continue;
                }
                try {
                    selected.add(key instanceof RSAKey rsa ? rsa.toPublicKey() : ((ECKey) key).toPublicKey());
                } catch (JOSEException e) {
                    throw new KeySourceException("an unusable key: " + key.getKeyID(), e);
                }
            }
            return selected;
        }
    }

    /** What a verifier checks; {@link #build()} needs keys and, so tokens for others are not taken, an audience. */
    public static final class Builder {
        private final List<JWK> keys = new ArrayList<>();
        private String issuer;
        private String audience;
        private Duration clockSkew = Duration.ofSeconds(60);
        private String principalClaim = "sub";

        private Builder() {
        }

        /** The public keys of a JWKS file ({@code {"keys": [...]}}); private and symmetric keys in it are refused. */
        public Builder jwks(Path file) {
            try {
                return jwks(Files.readString(file, StandardCharsets.UTF_8));
            } catch (IOException e) {
                throw new UncheckedIOException("cannot read the JWKS file " + file, e);
            }
        }

        /** The public keys of a JWKS document. */
        public Builder jwks(String json) {
            JWKSet set;
            try {
                set = JWKSet.parse(json);
            } catch (ParseException e) {
                throw new IllegalArgumentException("not a JWKS document: " + e.getMessage(), e);
            }
            for (JWK key : set.getKeys()) {
                if (key.isPrivate() || !(key instanceof RSAKey || key instanceof ECKey)) {
                    throw new IllegalArgumentException("a JWKS of verification keys holds public RSA or EC keys"
                            + " only; key " + key.getKeyID() + " is " + (key.isPrivate() ? "private" : key.getKeyType()));
                }
                keys.add(key);
            }
            return this;
        }

        /** The {@code PUBLIC KEY} blocks (RSA or EC, X.509 SubjectPublicKeyInfo) of a PEM file. */
        public Builder pemPublicKeys(Path file) {
            String text;
            try {
                text = Files.readString(file, StandardCharsets.US_ASCII);
            } catch (IOException e) {
                throw new UncheckedIOException("cannot read the PEM file " + file, e);
            }
            Matcher m = PEM.matcher(text);
            int found = 0;
            while (m.find()) {
                publicKey(decode(m.group(1).replaceAll("\\s", ""), file));
                found++;
            }
            if (found == 0) {
                throw new IllegalArgumentException(file + " holds no PUBLIC KEY block");
            }
            return this;
        }

        /** A public key (RSA or EC). */
        public Builder publicKey(PublicKey key) {
            if (key instanceof RSAPublicKey rsa) {
                keys.add(new RSAKey.Builder(rsa).build());
            } else if (key instanceof ECPublicKey ec) {
                try {
                    keys.add(new ECKey.Builder(com.nimbusds.jose.jwk.Curve.forECParameterSpec(ec.getParams()), ec).build());
                } catch (RuntimeException e) {
                    throw new IllegalArgumentException("an EC key on a curve JWT does not use", e);
                }
            } else {
                throw new IllegalArgumentException("an RSA or EC public key is needed, not " + key.getAlgorithm());
            }
            return this;
        }

        /** The {@code iss} every token must have; null (the default): not checked. */
        public Builder issuer(String iss) {
            issuer = iss;
            return this;
        }

        /** An audience every token's {@code aud} must hold. */
        public Builder audience(String aud) {
            audience = aud;
            return this;
        }

        /** How far {@code exp} and {@code nbf} may be off the server's clock; 60 s by default. */
        public Builder clockSkew(Duration skew) {
            if (skew.isNegative()) {
                throw new IllegalArgumentException("a clock skew cannot be negative: " + skew);
            }
            clockSkew = skew;
            return this;
        }

        /** The claim that names the principal; {@code sub} by default. */
        public Builder principalClaim(String claim) {
            principalClaim = Objects.requireNonNull(claim, "claim");
            return this;
        }

        public JwtTokenVerifier build() {
            if (keys.isEmpty()) {
                throw new IllegalArgumentException("a JWT verifier needs at least one public key");
            }
            if (audience == null) {
                // a token issued for another service would do here too
                throw new IllegalArgumentException("a JWT verifier needs the audience its tokens must name");
            }
            return new JwtTokenVerifier(this);
        }

        private static PublicKey decode(String base64, Path file) {
            byte[] der = Base64.getDecoder().decode(base64);
            for (String algorithm : List.of("RSA", "EC")) {
                try {
                    return KeyFactory.getInstance(algorithm).generatePublic(new X509EncodedKeySpec(der));
                } catch (GeneralSecurityException e) {
                    // try the next key type
                }
            }
            throw new IllegalArgumentException("a PUBLIC KEY block of " + file + " is neither RSA nor EC");
        }
    }
}
