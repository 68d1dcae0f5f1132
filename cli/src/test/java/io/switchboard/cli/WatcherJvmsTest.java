package io.switchboard.cli;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;

import org.junit.jupiter.api.Test;

/** What the bench makes of a watcher JVM's output: its reports, the JVM's own notes, and garbage. */
class WatcherJvmsTest {
    @Test
    void reportsAreRead() {
        WatcherJvms.Line synced = WatcherJvms.Line.parse("SYNCED 1250");
        assertEquals("SYNCED", synced.kind());
        assertArrayEquals(new long[] {1250}, synced.values());
        WatcherJvms.Line told = WatcherJvms.Line.parse("TOLD 7 1764391200123 13");
        assertEquals("TOLD", told.kind());
        assertArrayEquals(new long[] {7, 1764391200123L, 13}, told.values());
    }

    @Test
    void theJvmsOwnNotesAreSkippedAndGarbageFailsTheRun() {
        assertEquals("OTHER", WatcherJvms.Line.parse("[0.622s][info][jfr,startup] Started recording 1.").kind());
        assertEquals("FAILED", WatcherJvms.Line.parse("FAILED a watch did not sync").kind());
        // a report cut short or mangled must not be taken for a figure, nor kill the reader silently
        assertEquals("FAILED", WatcherJvms.Line.parse("TOLD 7 17643912").kind());
        assertEquals("FAILED", WatcherJvms.Line.parse("TOLD 7 x 13").kind());
        assertEquals("FAILED", WatcherJvms.Line.parse("SYNCED").kind());
        assertEquals("FAILED", WatcherJvms.Line.parse("SYNCED 12 13").kind());
    }
}
