package io.switchboard.bench;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.List;
import org.junit.jupiter.api.Test;

class PrecedingRowsTest {
    @Test
    void eachRowsMedianByTheRowCalledBeforeWithItsCount() {
        PrecedingRows before = new PrecedingRows(Workload.EMPTY, 0);
        assertTrue(before.isEmpty());
        before.add("tcp", "soap", 40_000);
        before.add("tcp", "soap", 44_000);
        before.add("tcp", "soap", 90_000);
        before.add("tcp", "socket", 20_000);
        before.add("socket", "tcp", 18_000);
        before.add("socket", "soap", 21_000);
        before.add("socket", "soap", 23_000);
        String table = before.markdown(List.of("tcp", "socket", "soap", "grpc"));
        List<String> lines = table.lines().toList();
        assertEquals("### empty 0: median µs (calls) by the row called just before", lines.get(0));
        // a row with no timed calls of its own (soap) has a column but no line; one never called (grpc) neither
        assertEquals("| row | after tcp | after socket | after soap | ", lines.get(2));
        assertEquals("| tcp |  | 20.0 (1) | 44.0 (3) | ", lines.get(4), "no call of tcp came after tcp");
        assertEquals("| socket | 18.0 (1) |  | 22.0 (2) | ", lines.get(5));
        assertEquals(6, lines.size(), table);
    }
}
