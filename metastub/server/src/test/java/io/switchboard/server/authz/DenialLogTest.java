package io.switchboard.server.authz;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.Test;

/** Denials are logged at most once a minute per identity and path, on a clock the test moves by hand. */
class DenialLogTest {
    private final AtomicLong now = new AtomicLong(1_000);
    private final List<String> lines = new CopyOnWriteArrayList<>();
    private final DenialLog log = new DenialLog(now::get, lines::add);

    @Test
    void oneLineAMinutePerIdentityAndPath() {
        log.denied("TOKEN:mallory", "/s.S/op", "denied: no rule");
        for (int i = 0; i < 1_000; i++) {
            now.addAndGet(TimeUnit.MILLISECONDS.toNanos(50));   // 50 s in all: within the minute
            log.denied("TOKEN:mallory", "/s.S/op", "denied: no rule");
        }
        assertEquals(1, lines.size(), "a thousand denials within a minute make one line: " + lines);

        log.denied("TOKEN:mallory", "/s.S/other", "denied: no rule");
        log.denied("TOKEN:alice", "/s.S/op", "denied: no rule");
        assertEquals(3, lines.size(), "another path, another identity: lines of their own");

        now.addAndGet(TimeUnit.SECONDS.toNanos(10));   // 60 s after the first line
        log.denied("TOKEN:mallory", "/s.S/op", "denied: no rule");
        assertEquals(4, lines.size());
        assertTrue(lines.get(3).contains("1000 more denial(s) of it in the last minute not logged"), lines.get(3));
        assertTrue(lines.get(3).startsWith("denied /s.S/op to TOKEN:mallory"), lines.get(3));

        now.addAndGet(TimeUnit.SECONDS.toNanos(59));
        log.denied("TOKEN:mallory", "/s.S/op", "denied: no rule");
        assertEquals(4, lines.size(), "59 s after the last line: still quiet");
    }

    @Test
    void aFloodOfFreshIdentitiesIsBoundedAndCounted() {
        for (int i = 0; i < DenialLog.MAX_KEYS + 500; i++) {
            log.denied("TOKEN:bot-" + i, "/s.S/op", "denied");
        }
        assertEquals(DenialLog.MAX_KEYS, lines.size(), "identities past the bound are not logged within the minute");
        now.addAndGet(DenialLog.INTERVAL_NANOS);
        log.denied("TOKEN:late", "/s.S/op", "denied");
        assertEquals(DenialLog.MAX_KEYS + 1, lines.size(), "once the minute passed there is room again");
        assertTrue(lines.get(lines.size() - 1).contains("500 denial(s) of other callers or paths not logged"),
                lines.get(lines.size() - 1));
    }
}
