package io.switchboard.examples.bench;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import picocli.CommandLine;

/**
 * {@code bench --quick} end to end on a tiny sweep, with the server in a forked JVM: the files it
 * writes and their shape. No timing is asserted; these machines are too noisy for that.
 */
class BenchCommandTest {
    @TempDir
    Path dir;

    @Test
    void quickSweepWritesCsvMarkdownAndPlots() throws Exception {
        int exit = new CommandLine(new BenchCommand()).execute("--quick", "--sizes", "10,1000", "--reps", "3",
                "--protocols", "socket,rmi,oos,soap", "--heap", "256m", "--out", dir.toString());
        assertEquals(0, exit);

        List<String> csv = Files.readAllLines(dir.resolve("bench.csv"), StandardCharsets.UTF_8);
        assertEquals("workload,size,protocol,median_us,p10_us,p90_us,payload_mb_per_s,wire_bytes", csv.get(0));
        Set<String> seen = new HashSet<>();
        for (String row : csv.subList(1, csv.size())) {
            String[] f = row.split(",", -1);
            assertEquals(8, f.length, row);
            seen.add(f[0] + "/" + f[2]);
            for (int i = 3; i <= 5; i++) {
                assertTrue(Double.parseDouble(f[i]) > 0, row);
            }
            assertTrue(Double.parseDouble(f[5]) >= Double.parseDouble(f[3]), "p90 >= median: " + row);
            assertTrue(f[0].equals("empty") ? f[6].isEmpty() : Double.parseDouble(f[6]) > 0, row);
            assertTrue(Long.parseLong(f[7]) > 0, "every peer here counts its wire bytes: " + row);
        }
        for (String workload : List.of("empty", "doubles", "list")) {
            for (String protocol : List.of("socket", "rmi", "oos", "soap")) {
                assertTrue(seen.contains(workload + "/" + protocol), "no row for " + workload + " over " + protocol);
            }
        }

        String md = Files.readString(dir.resolve("bench.md"), StandardCharsets.UTF_8);
        assertTrue(md.contains("÷ socket") && md.contains("÷ soap"), md);
        assertTrue(md.contains("./switchboard bench --quick"), "the command that reproduces the run");
        assertTrue(md.contains("load average"), md);
        assertTrue(Files.size(dir.resolve("bench-doubles.png")) > 0);
        assertTrue(Files.size(dir.resolve("bench-list.png")) > 0);
    }
}
