package io.switchboard.protocol.spi;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;

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
}
