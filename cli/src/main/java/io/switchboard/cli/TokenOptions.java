package io.switchboard.cli;

import io.switchboard.protocol.ClientSettings;
import io.switchboard.protocol.ServerSettings;
import io.switchboard.protocol.TokenFile;
import io.switchboard.protocol.TokenVerifier;
import io.switchboard.protocol.spi.JwtTokenVerifier;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.function.Supplier;
import picocli.CommandLine.Option;

/**
 * The bearer-token flags, beside {@link TlsOptions}: {@link Caller} for commands that call
 * ({@code --token-file}), {@link Verifier} for commands that serve ({@code --jwt-keys} and the
 * claims every token must carry). A token is never printed.
 *
 * <pre>{@code
 * ./switchboard registry --jwt-keys jwks.json --jwt-issuer https://issuer.example --jwt-audience switchboard
 * ./switchboard call Echo ping --token-file /run/secrets/token
 * }</pre>
 */
final class TokenOptions {
    private TokenOptions() {
    }

    /** {@code --token-file}: the token sent with every call, read again when the file changes (tokens rotate). */
    static final class Caller {
        @Option(names = "--token-file", paramLabel = "FILE", description = "File holding a bearer token (a JWT) to "
                + "send with every call, read again when it changes. Sent over plain text too, where anyone on the "
                + "path can read it: use it with TLS endpoints.")
        Path tokenFile;

        /** {@code base} sending the file's token; {@code base} itself without the flag. */
        ClientSettings client(ClientSettings base) {
            Supplier<String> token = token();
            return token == null ? base : base.withToken(token);
        }

        /** The file's token, read now and whenever the file changes; null without the flag. */
        Supplier<String> token() {
            if (tokenFile == null) {
                return null;
            }
            try {
                return TokenFile.read(tokenFile);   // an unreadable file stops the command now, not at its first call
            } catch (UncheckedIOException e) {
                throw new UncheckedIOException("--token-file: " + e.getMessage(), e.getCause());
            }
        }
    }

    /** The verifier's flags: keys, issuer, audience, the principal's claim, the clock skew. */
    static final class Verifier {
        @Option(names = "--jwt-keys", paramLabel = "FILE", description = "Public keys bearer tokens are verified "
                + "with: a JWKS file (JSON) or PEM PUBLIC KEY blocks, read again at most every 10 s so keys rotate "
                + "without a restart. A call with a token that does not verify is refused; a call without one keeps "
                + "its certificate's identity, or none.")
        Path keys;

        @Option(names = "--jwt-issuer", paramLabel = "ISS", description = "The iss every token must have.")
        String issuer;

        @Option(names = "--jwt-audience", paramLabel = "AUD", description = "An audience every token's aud must "
                + "hold (needed with --jwt-keys).")
        String audience;

        @Option(names = "--jwt-principal-claim", paramLabel = "CLAIM", defaultValue = "sub", description = "The "
                + "claim that names the caller (default: ${DEFAULT-VALUE}).")
        String principalClaim = "sub";

        @Option(names = "--jwt-clock-skew", paramLabel = "SECONDS", defaultValue = "60", description = "How far exp "
                + "and nbf may be off this host's clock (default: ${DEFAULT-VALUE}).")
        int clockSkewSeconds = 60;

        /** The verifier the flags describe; null without {@code --jwt-keys}. */
        TokenVerifier verifier() {
            if (keys == null) {
                if (issuer != null || audience != null) {
                    throw new IllegalArgumentException("--jwt-issuer and --jwt-audience need --jwt-keys");
                }
                return null;
            }
            if (audience == null) {
                throw new IllegalArgumentException("--jwt-keys needs --jwt-audience: without it a token issued for "
                        + "another service would do here too");
            }
            JwtTokenVerifier.Builder b = JwtTokenVerifier.builder().issuer(issuer).audience(audience)
                    .principalClaim(principalClaim).clockSkew(Duration.ofSeconds(clockSkewSeconds));
            return (isJwks(keys) ? b.jwks(keys) : b.pemPublicKeys(keys)).build();
        }

        /** {@code base} verifying tokens as the flags say. */
        ServerSettings server(ServerSettings base) {
            return base.withTokenVerifier(verifier());
        }

        /** What a server prints about its tokens: the files and claims, no key material. */
        String describe() {
            return keys == null ? "not looked at (no --jwt-keys)"
                    : "verified with " + keys + ", issuer " + (issuer == null ? "any" : issuer) + ", audience "
                    + audience + ", principal from " + principalClaim;
        }

        private static boolean isJwks(Path file) {
            try {
                return Files.readString(file, StandardCharsets.UTF_8).stripLeading().startsWith("{");
            } catch (IOException e) {
                throw new IllegalArgumentException("cannot read --jwt-keys " + file + ": " + e.getMessage(), e);
            }
        }
    }
}
