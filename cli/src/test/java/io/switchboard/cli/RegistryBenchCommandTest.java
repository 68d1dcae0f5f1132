package io.switchboard.cli;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.Arrays;
import java.util.List;
import org.junit.jupiter.api.Test;

/** A row of registry-bench's table says what was measured, and "-" for what was not; its flags are checked. */
class RegistryBenchCommandTest {
    private static List<String> cells(RegistryBenchCommand.Row row) {
        String line = row.markdown();
        return Arrays.stream(line.substring(1, line.length() - 1).split("\\|")).map(String::strip).toList();
    }

    @Test
    void withoutWatchersTheToldAndWatchedColumnsAreEmptyNotFigures() {
        // a run without watchers times no bind to a watcher: nothing there to report
        List<String> c = cells(new RegistryBenchCommand.Row("memory", 10_000, 0, 455, 39, 17_784,
                -57_693_619, -57_693_574, 15, 198, 78, 0, 0, 0, 0, 1));
        assertEquals(14, c.size(), c.toString());
        assertEquals("-", c.get(3), "watcher JVMs");
        assertEquals("17,784", c.get(6), "lookups/s");
        assertEquals("-", c.get(7), "bind -> last watcher told");
        assertEquals("-", c.get(8), "binds/s while watched");
    }

    @Test
    void aNegativeSettleIsRefusedBeforeAnythingStarts() {
        String err = CommandOutput.stderr(1, "registry-bench", "--stores", "memory", "--settle-seconds", "-5");
        assertTrue(err.contains("--settle-seconds must be 0 or more, not -5"), err);
    }

    @Test
    void withWatchersEveryColumnHasItsFigure() {
        List<String> c = cells(new RegistryBenchCommand.Row("zookeeper", 10_000, 10_000, 262, 47, 3_711,
                62, 117, 75, 243, 170, 10_000, 0, 8, 41, 1));
        assertEquals(List.of("zookeeper", "10,000", "10,000", "8", "262", "47", "3,711", "62 / 117", "41", "75",
                "243 / 170", "10,000", "1", "0"), c);
    }
}
