package io.switchboard.protocol.spi;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Queue;
import org.junit.jupiter.api.Test;
import org.slf4j.event.EventRecordingLogger;
import org.slf4j.event.Level;
import org.slf4j.event.SubstituteLoggingEvent;
import org.slf4j.helpers.SubstituteLogger;

class StrangerWarningsTest {
    @Test
    void theFirstAndEveryHundredthAreWarnedOfAndNothingElse() {
        List<Long> due = new ArrayList<>();
        for (long n = -1; n <= 1000; n++) {
            if (StrangerWarnings.due(n)) {
                due.add(n);
            }
        }
        assertEquals(List.of(1L, 100L, 200L, 300L, 400L, 500L, 600L, 700L, 800L, 900L, 1000L), due);
    }

    @Test
    void aCountPastTheRangeOfIntStillTakesItsTurn() {
        assertTrue(StrangerWarnings.due(100L * Integer.MAX_VALUE));
        assertFalse(StrangerWarnings.due(100L * Integer.MAX_VALUE + 1));
    }

    @Test
    void eachOccurrenceIsCountedAndLoggedAtWarnWithItsCountWhenDueElseAtDebug() {
        Queue<SubstituteLoggingEvent> events = new ArrayDeque<>();
        EventRecordingLogger log = new EventRecordingLogger(new SubstituteLogger("test", events, false), events);
        StrangerWarnings refusals = new StrangerWarnings("refused at TLS");
        for (int i = 0; i < 250; i++) {
            refusals.log(log, "refused {} at TLS: {}", "/10.0.0.7:" + i, "no certificate");
        }

        assertEquals(250, refusals.count());
        assertEquals(250, events.size(), "every occurrence is logged, at one level or the other");
        List<SubstituteLoggingEvent> warned = events.stream().filter(e -> e.getLevel() == Level.WARN).toList();
        assertEquals(3, warned.size());
        assertEquals("refused {} at TLS: {} ({} refused at TLS so far)", warned.get(2).getMessage());
        assertEquals(List.of("/10.0.0.7:199", "no certificate", 200L), Arrays.asList(warned.get(2).getArgumentArray()));
        SubstituteLoggingEvent second = events.stream().skip(1).findFirst().orElseThrow();
        assertEquals(Level.DEBUG, second.getLevel());
        assertEquals("refused {} at TLS: {}", second.getMessage());
        assertEquals(List.of("/10.0.0.7:1", "no certificate"), Arrays.asList(second.getArgumentArray()));
    }
}
