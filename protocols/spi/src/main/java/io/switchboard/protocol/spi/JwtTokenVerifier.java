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
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Verifies JWT bearer tokens with nimbus-jose-jwt: the signature against public keys (a JWKS
 * file or PEM {@code PUBLIC KEY} blocks; RSA or EC), the issuer, the audience, and
 * {@code exp} and {@code nbf} with a clock skew (60 s by default). The principal is {@code sub},
 * or another claim when configured. Only the signature algorithms of the keys' own types are
 * taken, so an unsigned token ({@code alg: none}) or an HMAC token made with a public key as its
 * secret never verifies. A token is never written into a message or a log. SPI.
 *
 * <p>Key files ({@link Builder#jwks(Path)}, {@link Builder#pemPublicKeys(Path)}) are read again
 * while the verifier runs, so keys rotate without a restart: at most once per
 * {@link Builder#recheckKeysEvery recheck interval} (10 s by default), when a token is verified
 * after it has passed, and at most once a second when a token names a {@code kid} that no key has
 * (a key just added). A file that cannot be read or parsed leaves the keys read before in place.
 *
 * <p>A token verified lately is remembered ({@link Builder#rememberVerified}), so a client that
 * sends the same token with every call pays for one signature check, not one per call.
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

    private static final Logger LOG = LoggerFactory.getLogger(JwtTokenVerifier.class);
    /** A key file larger than this is not read: a JWKS or PEM file of verification keys is a few KiB. */
    static final int MAX_KEY_FILE_BYTES = 1 << 20;
    /** A token naming a key no file has makes the files be read again, but not more often than this. */
    private static final long UNKNOWN_KEY_RECHECK_NANOS = 1_000_000_000L;

    private final DefaultJWTProcessor<SecurityContext> processor;
    private final KeySelector selector;
    private final String principalClaim;
    private final String description;
    private final VerifiedTokens verified;
    private final java.util.concurrent.atomic.AtomicLong signatureChecks = new java.util.concurrent.atomic.AtomicLong();

    private JwtTokenVerifier(Builder b) {
        processor = new DefaultJWTProcessor<>();
        selector = new KeySelector(b.keys, b.files, b.recheck.toNanos());
        processor.setJWSKeySelector(selector);
        DefaultJWTClaimsVerifier<SecurityContext> claims = new DefaultJWTClaimsVerifier<>(
                b.audience == null ? null : Set.of(b.audience),
                b.issuer == null ? null : new JWTClaimsSet.Builder().issuer(b.issuer).build(),
                Set.of("exp", b.principalClaim), null);
        claims.setMaxClockSkew((int) Math.min(Integer.MAX_VALUE, b.clockSkew.toSeconds()));
        processor.setJWTClaimsSetVerifier(claims);
        principalClaim = b.principalClaim;
        verified = new VerifiedTokens(b.rememberVerified, b.clockSkew.toMillis());
        description = "JWT verifier (" + selector.keys().size() + " keys" + (b.files.isEmpty() ? ""
                : " from " + b.files.size() + " files read again every " + (b.recheck.toMillis() % 1000 == 0
                        ? b.recheck.toSeconds() + " s" : b.recheck.toMillis() + " ms"))
                + ", issuer " + b.issuer + ", audience " + b.audience + ", principal " + principalClaim + ")";
    }

    /** How often the key files were read, the first time (at build) included; for monitoring and tests. */
    public long keyFileReads() {
        return selector.reads.get();
    }

    public static Builder builder() {
        return new Builder();
    }

    /** How many tokens had their signature checked (a token remembered as verified has not); for monitoring and tests. */
    public long signatureChecks() {
        return signatureChecks.get();
    }

    @Override
    public String verify(String token) {
        selector.recheckIfDue(false);
        List<JWK> keys = selector.keys();
        java.nio.ByteBuffer remembered = verified.keyOf(token);
        if (remembered != null) {
            String principal = verified.principal(remembered, keys, System.currentTimeMillis());
            if (principal != null) {
                return principal;
            }
        }
        signatureChecks.incrementAndGet();
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
        if (remembered != null) {
            verified.remember(remembered, p, keys, claims.getExpirationTime(), claims.getNotBeforeTime());
        }
        return p;
    }

    @Override
    public String toString() {
        return description;
    }

    /** A file of public keys, read again when it is due, and its keys as last read. */
    private static final class KeyFile {
        final Path path;
        final boolean jwks;
        List<JWK> keys;   // read and written by the thread holding the selector's lock, or the builder
        byte[] lastBytes;
        /** The last refusal logged, so a file broken the same way is not logged at every recheck. */
        String lastProblem;

        KeyFile(Path path, boolean jwks) {
            this.path = path;
            this.jwks = jwks;
        }

        /** Reads the file; its keys, or an exception saying why they cannot be taken. */
        List<JWK> read(byte[] bytes) {
            return jwks ? Builder.parseJwks(new String(bytes, StandardCharsets.UTF_8))
                    : Builder.parsePem(new String(bytes, StandardCharsets.US_ASCII), path);
        }
    }

    /**
     * The keys that may have signed a token: of the family of its algorithm (RSA keys for RS and
     * PS, EC keys for ES; never HMAC or none), and of its {@code kid} when both name one (PEM keys
     * name none and are tried for every token). Holds the fixed keys and the key files' keys as last read.
     */
    private static final class KeySelector implements JWSKeySelector<SecurityContext> {
        private final List<JWK> fixed;
        private final List<KeyFile> files;
        private final long recheckNanos;
        private final java.util.concurrent.locks.ReentrantLock reading = new java.util.concurrent.locks.ReentrantLock();
        final java.util.concurrent.atomic.AtomicLong reads = new java.util.concurrent.atomic.AtomicLong();
        private volatile long lastRead;
        /** The fixed keys and the files' keys as last read: made again when a file's keys change, not per token. */
        private volatile List<JWK> keys;

        KeySelector(List<JWK> fixed, List<KeyFile> files, long recheckNanos) {
            this.fixed = List.copyOf(fixed);
            this.files = List.copyOf(files);
            this.recheckNanos = recheckNanos;
            this.lastRead = System.nanoTime();
            reads.set(files.size());   // each read once by the builder
            this.keys = gather();
        }

        List<JWK> keys() {
            return keys;
        }

        private List<JWK> gather() {
            List<JWK> all = new ArrayList<>(fixed);
            for (KeyFile f : files) {
                all.addAll(f.keys);
            }
            return List.copyOf(all);
        }

        /**
         * Reads the key files again if the recheck interval has passed since they were last read,
         * or, for a token naming an unknown key, a second has. One thread reads; the others go on
         * with the keys as they are.
         */
        boolean recheckIfDue(boolean unknownKey) {
            if (files.isEmpty()) {
                return false;
            }
            long since = System.nanoTime() - lastRead;
            if (since < recheckNanos && (!unknownKey || since < UNKNOWN_KEY_RECHECK_NANOS)) {
                return false;
            }
            if (!reading.tryLock()) {
                return false;
            }
            try {
                if (System.nanoTime() - lastRead < Math.min(recheckNanos, UNKNOWN_KEY_RECHECK_NANOS)) {
                    return false;   // another thread read them just now
                }
                boolean changed = false;
                for (KeyFile f : files) {
                    changed |= reread(f);
                }
                if (changed) {
                    keys = gather();
                }
                lastRead = System.nanoTime();
                return changed;
            } finally {
                reading.unlock();
            }
        }

        /** Reads one file again; whether its keys changed. A file that cannot be taken leaves its keys as they were. */
        private boolean reread(KeyFile f) {
            reads.incrementAndGet();
            String problem;
            try {
                byte[] bytes = readBounded(f.path);
                if (java.util.Arrays.equals(bytes, f.lastBytes)) {
                    return false;
                }
                List<JWK> keys = f.read(bytes);
                f.keys = keys;
                f.lastBytes = bytes;
                f.lastProblem = null;
                LOG.info("JWT keys read again from {}: {} keys{}", f.path, keys.size(), kids(keys));
                return true;
            } catch (IOException | UncheckedIOException e) {
                problem = "cannot read it: " + e.getMessage();
            } catch (IllegalArgumentException e) {
                problem = e.getMessage();
            }
            if (!problem.equals(f.lastProblem)) {
                f.lastProblem = problem;
                LOG.warn("JWT keys in {} not taken ({}); the {} keys read before stay", f.path, problem, f.keys.size());
            }
            return false;
        }

        private static String kids(List<JWK> keys) {
            List<String> ids = new ArrayList<>();
            for (JWK k : keys) {
                if (k.getKeyID() != null) {
                    ids.add(k.getKeyID());
                }
            }
            return ids.isEmpty() ? "" : " (kid " + String.join(", ", ids) + ")";
        }

        @Override
        public List<? extends Key> selectJWSKeys(JWSHeader header, SecurityContext context) throws KeySourceException {
            JWSAlgorithm alg = header.getAlgorithm();
            KeyType type = JWSAlgorithm.Family.RSA.contains(alg) ? KeyType.RSA
                    : JWSAlgorithm.Family.EC.contains(alg) ? KeyType.EC : null;
            if (type == null) {
                return List.of();   // nimbus then refuses the token: no key for its algorithm
            }
            List<Key> selected = select(keys(), header, alg, type);
            if (selected.isEmpty() && header.getKeyID() != null && recheckIfDue(true)) {
                selected = select(keys(), header, alg, type);   // a key added to a file since it was last read
            }
            return selected;
        }

        private static List<Key> select(List<JWK> keys, JWSHeader header, JWSAlgorithm alg, KeyType type)
                throws KeySourceException {
            List<Key> selected = new ArrayList<>();
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

    /** The bytes of a key file, refused when it is over {@link #MAX_KEY_FILE_BYTES}. */
    private static byte[] readBounded(Path file) throws IOException {
        try (java.io.InputStream in = Files.newInputStream(file)) {
            byte[] bytes = in.readNBytes(MAX_KEY_FILE_BYTES + 1);
            if (bytes.length > MAX_KEY_FILE_BYTES) {
                throw new IOException("it is over " + MAX_KEY_FILE_BYTES + " bytes, too large for a file of public keys");
            }
            return bytes;
        }
    }

    /** What a verifier checks; {@link #build()} needs keys and, so tokens for others are not taken, an audience. */
    public static final class Builder {
        private final List<JWK> keys = new ArrayList<>();
        private final List<KeyFile> files = new ArrayList<>();
        private Duration recheck = Duration.ofSeconds(10);
        private String issuer;
        private String audience;
        private Duration clockSkew = Duration.ofSeconds(60);
        private String principalClaim = "sub";
        private int rememberVerified = 1024;

        private Builder() {
        }

        /**
         * How many verified tokens are remembered (by their SHA-256, never the token), so that the
         * same token on the next call skips the signature check: 1,024 by default, 0 for none. A
         * remembered token is held to its {@code exp} and {@code nbf} on every call, and verified in
         * full again once the keys have changed.
         */
        public Builder rememberVerified(int tokens) {
            if (tokens < 0) {
                throw new IllegalArgumentException("a number of tokens cannot be negative: " + tokens);
            }
            rememberVerified = tokens;
            return this;
        }

        /**
         * The public keys of a JWKS file ({@code {"keys": [...]}}); private and symmetric keys in it
         * are refused. The file is read now and again while the verifier runs (see the class comment).
         */
        public Builder jwks(Path file) {
            return keyFile(new KeyFile(file, true), "JWKS");
        }

        /** The public keys of a JWKS document. */
        public Builder jwks(String json) {
            keys.addAll(parseJwks(json));
            return this;
        }

        /**
         * The {@code PUBLIC KEY} blocks (RSA or EC, X.509 SubjectPublicKeyInfo) of a PEM file, read
         * now and again while the verifier runs (see the class comment).
         */
        public Builder pemPublicKeys(Path file) {
            return keyFile(new KeyFile(file, false), "PEM");
        }

        /** A public key (RSA or EC). */
        public Builder publicKey(PublicKey key) {
            keys.add(jwk(key));
            return this;
        }

        /**
         * How often, at most, the key files are read again to find rotated keys (10 s by default);
         * a token naming an unknown {@code kid} has them read again after a second.
         */
        public Builder recheckKeysEvery(Duration interval) {
            if (interval.isNegative() || interval.isZero()) {
                throw new IllegalArgumentException("a recheck interval must be positive: " + interval);
            }
            recheck = interval;
            return this;
        }

        private Builder keyFile(KeyFile f, String kind) {
            byte[] bytes;
            try {
                bytes = readBounded(f.path);
            } catch (IOException e) {
                throw new UncheckedIOException("cannot read the " + kind + " file " + f.path + ": " + e.getMessage(), e);
            }
            f.keys = f.read(bytes);
            f.lastBytes = bytes;
            files.add(f);
            return this;
        }

        /** The keys of a JWKS document: public RSA or EC keys, at least one. */
        static List<JWK> parseJwks(String json) {
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
            }
            if (set.getKeys().isEmpty()) {
                throw new IllegalArgumentException("a JWKS document without keys");
            }
            return List.copyOf(set.getKeys());
        }

        /** The keys of the {@code PUBLIC KEY} blocks of a PEM text, at least one. */
        static List<JWK> parsePem(String text, Path file) {
            Matcher m = PEM.matcher(text);
            List<JWK> found = new ArrayList<>();
            while (m.find()) {
                found.add(jwk(decode(m.group(1).replaceAll("\\s", ""), file)));
            }
            if (found.isEmpty()) {
                throw new IllegalArgumentException(file + " holds no PUBLIC KEY block");
            }
            return List.copyOf(found);
        }

        private static JWK jwk(PublicKey key) {
            if (key instanceof RSAPublicKey rsa) {
                return new RSAKey.Builder(rsa).build();
            } else if (key instanceof ECPublicKey ec) {
                try {
                    return new ECKey.Builder(com.nimbusds.jose.jwk.Curve.forECParameterSpec(ec.getParams()), ec).build();
                } catch (RuntimeException e) {
                    throw new IllegalArgumentException("an EC key on a curve JWT does not use", e);
                }
            }
            throw new IllegalArgumentException("an RSA or EC public key is needed, not " + key.getAlgorithm());
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
            if (keys.isEmpty() && files.isEmpty()) {
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
