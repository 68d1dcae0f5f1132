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
        Instant written = Instant.parse("2026-01-01T00:00:00Z");
        long[] now = {written.plusSeconds(60).toEpochMilli()};
        Path file = rewrite(dir.resolve("token"), "old.jwt", written);
        TokenFile token = TokenFile.read(file, () -> now[0]);
        assertEquals("old.jwt", token.get());

        Instant rewritten = written.plusSeconds(120);
        now[0] = rewritten.toEpochMilli() + 1;
        rewrite(file, "", rewritten);   // truncated for the rewrite
        assertEquals("old.jwt", token.get(), "the token before stands while the file is empty");
        rewrite(file, "new.j", rewritten);   // caught half-written
        assertEquals("new.j", token.get());
        rewrite(file, "new.jwt", rewritten);   // the rest of the write, within the same tick of the file system's clock
        assertEquals("new.jwt", token.get(), "read again: the file is too recent to be taken as written");

        now[0] = rewritten.toEpochMilli() + TokenFile.SETTLE_MILLIS;
        assertEquals("new.jwt", token.get());   // read once more, now settled
        rewrite(file, "abc.jwt", rewritten);   // the same time and size: a settled file is not read again
        assertEquals("new.jwt", token.get());
        rewrite(file, "longer.jwt", rewritten);   // the same time, another size
        assertEquals("longer.jwt", token.get());
        Path other = rewrite(dir.resolve("next"), "moved.jwt!", rewritten);   // the same time and size, another file
        Files.move(other, file, java.nio.file.StandardCopyOption.REPLACE_EXISTING, java.nio.file.StandardCopyOption.ATOMIC_MOVE);
        assertEquals("longer.jwt".length(), "moved.jwt!".length());
        assertEquals("moved.jwt!", token.get(), "a file renamed over it is read");
    }

    @Test
    void anEmptyFileFailsOnceItHasSettledAndAtOnceWhenItIsTheFirstRead() throws Exception {
        Instant written = Instant.parse("2026-01-01T00:00:00Z");
        long[] now = {written.toEpochMilli()};
        Path file = rewrite(dir.resolve("token"), "t.jwt", written);
        TokenFile token = TokenFile.read(file, () -> now[0]);
        Instant emptied = written.plusSeconds(60);
        rewrite(file, "\n", emptied);
        now[0] = emptied.toEpochMilli() + 1;
        assertEquals("t.jwt", token.get(), "just emptied: perhaps for a rewrite");
        now[0] = emptied.toEpochMilli() + TokenFile.SETTLE_MILLIS;
        UncheckedIOException left = assertThrows(UncheckedIOException.class, token::get);
        assertTrue(left.getMessage().endsWith("it is empty"), left.getMessage());
        assertFalse(left.getMessage().contains("t.jwt"), left.getMessage());

        Path empty = Files.writeString(dir.resolve("empty"), "");
        UncheckedIOException first = assertThrows(UncheckedIOException.class, () -> TokenFile.read(empty));
        assertTrue(first.getMessage().endsWith("it is empty"), first.getMessage());
    }

    private static Path rewrite(Path file, String content, Instant modified) throws Exception {
        Files.writeString(file, content);
        return Files.setLastModifiedTime(file, FileTime.from(modified));
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
