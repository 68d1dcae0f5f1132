package io.switchboard.protocol;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.FileTime;
import java.time.Instant;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class TokenFileTest {
    @TempDir
    Path dir;

    @Test
    void theTokenIsReadAndReadAgainWhenTheFileChanges() throws Exception {
        Path file = Files.writeString(dir.resolve("token"), "first.jwt\n");
        Files.setLastModifiedTime(file, FileTime.from(Instant.parse("2026-01-01T00:00:00Z")));
        TokenFile token = TokenFile.read(file);
        assertEquals("first.jwt", token.get());

        Files.writeString(file, "  second.jwt  ");
        // a rotation: the time is set, so that a coarse file-system clock cannot hide it
        Files.setLastModifiedTime(file, FileTime.from(Instant.parse("2026-01-01T00:01:00Z")));
        assertEquals("second.jwt", token.get());
    }

    @Test
    void aFileRewrittenInPlaceIsReadAgainUntilItSettlesThoughItsModificationTimeStaysTheSame() throws Exception {
        Path file = Files.writeString(dir.resolve("token"), "old.jwt");
        FileTime longAgo = FileTime.from(Instant.parse("2026-01-01T00:00:00Z"));
        Files.setLastModifiedTime(file, longAgo);
        TokenFile token = TokenFile.read(file);
        assertEquals("old.jwt", token.get());

        FileTime now = FileTime.from(Instant.now());
        rewrite(file, "", now);   // truncated for the rewrite
        assertEquals("old.jwt", token.get(), "the token before stands while the file is empty");
        rewrite(file, "new.j", now);   // caught half-written
        assertEquals("new.j", token.get());
        rewrite(file, "new.jwt", now);   // the rest of the write, within the same tick of the file system's clock
        assertEquals("new.jwt", token.get(), "read again: the file is too recent to be taken as written");

        FileTime settled = FileTime.from(Instant.now().minusSeconds(10));
        Files.setLastModifiedTime(file, settled);
        assertEquals("new.jwt", token.get());
        rewrite(file, "unseen.jwt", settled);
        assertEquals("new.jwt", token.get(), "a settled file is read again only when its time changes");
    }

    @Test
    void anEmptyFileFailsOnceItHasSettledAndAtOnceWhenItIsTheFirstRead() throws Exception {
        Path file = Files.writeString(dir.resolve("token"), "t.jwt");
        TokenFile token = TokenFile.read(file);
        rewrite(file, "\n", FileTime.from(Instant.now().minusSeconds(10)));
        UncheckedIOException left = assertThrows(UncheckedIOException.class, token::get);
        assertTrue(left.getMessage().endsWith("it is empty"), left.getMessage());
        assertFalse(left.getMessage().contains("t.jwt"), left.getMessage());

        Path empty = Files.writeString(dir.resolve("empty"), "");
        UncheckedIOException first = assertThrows(UncheckedIOException.class, () -> TokenFile.read(empty));
        assertTrue(first.getMessage().endsWith("it is empty"), first.getMessage());
    }

    private static void rewrite(Path file, String content, FileTime modified) throws Exception {
        Files.writeString(file, content);
        Files.setLastModifiedTime(file, modified);
    }

    @Test
    void aMissingFileFailsAtOnceNamingTheFile() {
        Path missing = dir.resolve("absent");
        UncheckedIOException e = assertThrows(UncheckedIOException.class, () -> TokenFile.read(missing));
        assertTrue(e.getMessage().startsWith("cannot read token file " + missing), e.getMessage());
    }

    @Test
    void aFileTooLargeForATokenIsRefusedWithoutShowingWhatItHolds() throws Exception {
        String secret = "s3cr3t-".repeat((int) (TokenFile.MAX_BYTES / 7) + 1);
        Path big = Files.writeString(dir.resolve("big"), secret);
        UncheckedIOException e = assertThrows(UncheckedIOException.class, () -> TokenFile.read(big));
        assertTrue(e.getMessage().contains("more than a token's " + TokenFile.MAX_BYTES), e.getMessage());
        assertFalse(e.getMessage().contains("s3cr3t"), "the message shows nothing of the file's contents");
    }

    @Test
    void aTokenThatBecomesUnreadableFailsTheNextRead() throws Exception {
        Path file = Files.writeString(dir.resolve("token"), "t.jwt");
        TokenFile token = TokenFile.read(file);
        Files.delete(file);
        assertThrows(UncheckedIOException.class, token::get);
    }
}
