package io.switchboard.bench;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.ArrayList;
import java.util.Map;
import org.junit.jupiter.api.Test;

/** The policy-step bench's rows, each timed, over a real server in this JVM. */
class PolicyStepBenchTest {
    @Test
    void everyRowIsTimedInTheOrderReportedAndGoesOverTcpsUnixSocket() throws Exception {
        Map<String, long[]> rows = PolicyStepBench.run("doubles", 40);

        assertEquals(PolicyStepBench.ROWS, new ArrayList<>(rows.keySet()));
        rows.forEach((row, q) -> {
            assertTrue(0 < q[1] && q[1] <= q[0] && q[0] <= q[2], row + ": p10 " + q[1] + ", median " + q[0]
                    + ", p90 " + q[2] + " ns");
            assertEquals(0, q[3], row + ": calls not over tcp's Unix socket (no re-probe within 10 s)");
        });
    }

    @Test
    void anUnknownWorkloadIsRefusedBeforeAnythingStarts() {
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class, () -> PolicyStepBench.run("list", 8));
        assertTrue(e.getMessage().contains("empty or doubles"), e.getMessage());
    }

    @Test
    void tooFewRoundsToTimeAnyAreRefusedBeforeAnythingStarts() {
        for (int rounds : new int[] {-1, 0, 3}) {
            IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
                    () -> PolicyStepBench.run("empty", rounds));
            assertTrue(e.getMessage().contains("4 or more"), e.getMessage());
        }
    }
}
