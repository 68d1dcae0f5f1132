package io.switchboard.cli;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.switchboard.protocol.PermissionDeniedException;
import io.switchboard.protocol.TokenVerifier;
import io.switchboard.testing.TestTokens;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.FileTime;
import java.time.Instant;
import java.util.function.Supplier;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import picocli.CommandLine;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;

class TokenOptionsTest {
    private final TestTokens tokens = TestTokens.get();

    @Command(name = "t")
    static final class Flags {
        @Mixin
        TokenOptions.Caller caller = new TokenOptions.Caller();
        @Mixin
        TokenOptions.Verifier verifier = new TokenOptions.Verifier();
    }

    private static Flags parse(String... args) {
        Flags f = new Flags();
        new CommandLine(f).parseArgs(args);
        return f;
    }

    @Test
    void jwksAndPemKeysMakeTheSameVerifier() {
        for (Path keys : new Path[] {tokens.jwksFile(), tokens.pemFile()}) {
            TokenVerifier v = parse("--jwt-keys", keys.toString(), "--jwt-issuer", TestTokens.ISSUER,
                    "--jwt-audience", TestTokens.AUDIENCE).verifier.verifier();
            assertEquals("alice", v.verify(tokens.valid("alice")), keys.toString());
            assertThrows(PermissionDeniedException.class, () -> v.verify(tokens.hostile("alice").get("wrong audience")));
        }
    }

    @Test
    void withoutKeysNothingIsVerifiedAndHalfASettingIsRefused() {
        assertNull(parse().verifier.verifier());
        assertThrows(IllegalArgumentException.class, () -> parse("--jwt-audience", "a").verifier.verifier());
        assertThrows(IllegalArgumentException.class,
                () -> parse("--jwt-keys", tokens.jwksFile().toString()).verifier.verifier());
    }

    @Test
    void theDescriptionNamesFilesAndClaimsNeverKeys() {
        String d = parse("--jwt-keys", tokens.jwksFile().toString(), "--jwt-audience", "aud").verifier.describe();
        assertTrue(d.contains(tokens.jwksFile().toString()) && d.contains("aud") && d.contains("sub"), d);
    }

    @Test
    void theTokenFileIsReadAgainWhenItChanges(@TempDir Path dir) throws Exception {
        Path file = dir.resolve("token");
        Files.writeString(file, "first-token\n");
        Files.setLastModifiedTime(file, FileTime.from(Instant.parse("2026-01-01T00:00:00Z")));
        Supplier<String> token = parse("--token-file", file.toString()).caller.token();
        assertEquals("first-token", token.get());
        Files.writeString(file, "second-token\n");
        Files.setLastModifiedTime(file, FileTime.from(Instant.parse("2026-01-01T00:01:00Z")));
        assertEquals("second-token", token.get());
        assertEquals("second-token", parse("--token-file", file.toString()).caller.client(
                io.switchboard.protocol.ClientSettings.defaults()).tokenNow());
    }

    @Test
    void aMissingTokenFileStopsTheCommandWithoutATokenInTheMessage(@TempDir Path dir) {
        Flags f = parse("--token-file", dir.resolve("absent").toString());
        Exception e = assertThrows(RuntimeException.class, f.caller::token);
        assertTrue(e.getMessage().contains("--token-file"), e.getMessage());
        assertNull(parse().caller.token());
        assertNull(parse().caller.client(io.switchboard.protocol.ClientSettings.defaults()).tokenNow());
    }
}
