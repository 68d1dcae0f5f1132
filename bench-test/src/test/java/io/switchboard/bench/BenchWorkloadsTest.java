package io.switchboard.bench;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import picocli.CommandLine;

/**
 * {@code bench} end to end on its other workloads (in-process and async rows, the phase breakdown,
 * the matrix) and its progress line: the files each writes and their shape. No timing is asserted.
 * A class apart from {@link BenchCommandTest} so that the two run in test JVMs side by side.
 */
class BenchWorkloadsTest {
    @TempDir
    Path dir;

    @Test
    void quickRunWritesTheInProcessRowAndTheAsyncTableWithEveryAnswerChecked() throws Exception {
        int exit = new CommandLine(new BenchCommand()).execute("--quick", "--sizes", "10", "--reps", "3",
                "--workloads", "doubles,async", "--protocols", "local,grpc,soap,grpc-plain", "--async-millis", "200", "--heap", "256m",
                "--out", dir.toString());
        assertEquals(0, exit, "exit 2 would mean a wrong answer or a local call that left the process");

        List<String> csv = Files.readAllLines(dir.resolve("bench.csv"), StandardCharsets.UTF_8);
        String local = csv.stream().filter(r -> r.startsWith("doubles,10,local,")).findFirst().orElseThrow();
        assertEquals("", local.split(",", -1)[7], "nothing on a wire in process, so no wire bytes: " + local);
        assertTrue(Files.readString(dir.resolve("bench.md"), StandardCharsets.UTF_8).contains("| 10 | local | "));

        List<String> async = Files.readAllLines(dir.resolve("async.csv"), StandardCharsets.UTF_8);
        assertEquals(AsyncBench.CSV_HEADER, async.get(0));
        Set<String> cells = new HashSet<>();
        for (String row : async.subList(1, async.size())) {
            String[] f = row.split(",", -1);
            assertEquals("", f[7], "no failure and no wrong answer: " + row);
            assertTrue(Long.parseLong(f[4]) > 0, "answers received and checked: " + row);
            cells.add(f[0] + "/" + f[2] + "/" + f[3]);
        }
        for (String protocol : List.of("local", "grpc", "soap", "grpc-plain")) {   // grpc-plain: grpc-java alone, the reference
            for (String cell : List.of("blocking/1", "async/1", "async/8", "async/64")) {
                assertTrue(cells.contains(protocol + "/" + cell), "no " + cell + " over " + protocol + " in " + cells);
            }
        }
        assertEquals(16, cells.size(), cells.toString());
        assertTrue(Files.readString(dir.resolve("async.md"), StandardCharsets.UTF_8).contains("./switchboard bench --quick"));
        assertTrue(Files.readString(dir.resolve("bench.md"), StandardCharsets.UTF_8).contains("## async"));
    }

    @Test
    void phaseBreakdownHasEveryPhaseOfSoapAndGrpcAndAGanttChart() throws Exception {
        int exit = new CommandLine(new BenchCommand()).execute("--phases", "--quick", "--phase-size", "100", "--reps", "4",
                "--warmup", "2", "--protocols", "soap,grpc,socket", "--heap", "256m", "--out", dir.toString());
        assertEquals(0, exit);

        List<String> csv = Files.readAllLines(dir.resolve("phases.csv"), StandardCharsets.UTF_8);
        assertEquals(PhaseReport.CSV_HEADER, csv.get(0));
        Set<String> seen = new HashSet<>();
        for (String row : csv.subList(1, csv.size())) {
            String[] f = row.split(",", -1);
            seen.add(f[0] + "/" + f[1].replace("\"", ""));
            assertEquals("4", f[f.length - 1], "every timed call counted: " + row);
        }
        for (String protocol : List.of("soap", "grpc")) {
            for (String segment : List.of("client: serialize request", "server: deserialize request", "server: operation (echo)",
                    "server: serialize response", "client: deserialize response", "round trip")) {
                assertTrue(seen.contains(protocol + "/" + segment), protocol + " has no '" + segment + "' in " + seen);
            }
        }
        assertTrue(seen.contains("socket/server: deserialize request"), seen.toString());
        String md = Files.readString(dir.resolve("phases.md"), StandardCharsets.UTF_8);
        assertTrue(md.contains("./switchboard bench --phases"), "the command that reproduces the run");
        assertTrue(Files.size(dir.resolve("phases.png")) > 0);
    }

    @Test
    void matrixWorkloadChecksEveryProductAndWritesItsTable() throws Exception {
        int exit = new CommandLine(new BenchCommand()).execute("--quick", "--workloads", "matrix", "--matrix-workers", "1",
                "--matrix-sizes", "6,20", "--reps", "2", "--protocols", "soap,grpc,oos", "--heap", "256m", "--out", dir.toString());
        assertEquals(0, exit);

        List<String> csv = Files.readAllLines(dir.resolve("matrix.csv"), StandardCharsets.UTF_8);
        assertEquals(MatrixReport.CSV_HEADER, csv.get(0));
        Set<String> seen = new HashSet<>();
        for (String row : csv.subList(1, csv.size())) {
            String[] f = row.split(",", -1);
            seen.add(f[0] + "/" + f[1] + "/" + f[3]);
            assertTrue(Double.parseDouble(f[4]) > 0, row);
            assertTrue(f[8].contains(f[3]), "a pinned policy's calls went over its protocol: " + row);
            assertTrue(Double.parseDouble(f[9]) > 0, "the JVMs' CPU time per product, from the scheduler: " + row);
            assertTrue(Double.parseDouble(f[10]) >= 0, "their wait for a CPU per product: " + row);
        }
        for (String algorithm : List.of("simple", "cannon")) {
            for (String n : List.of("6", "20")) {
                for (String policy : List.of("soap", "grpc")) {
                    assertTrue(seen.contains(algorithm + "/" + n + "/" + policy), "no row " + algorithm + " " + n + " " + policy);
                }
            }
        }
        assertEquals(8, seen.size(), "oos is no matrix row: " + seen);
        assertTrue(Files.notExists(dir.resolve("bench.csv")), "no sweep workload was asked for");
        assertTrue(Files.size(dir.resolve("matrix.png")) > 0);
    }

    @Test
    void matrixBaselinesAndTcpRunInTheSameRoundsOnAGridOfFourWorkersEveryProductExact() throws Exception {
        List<String> rows = List.of("tcp", "grpc", "rmi", "socket");
        int exit = new CommandLine(new BenchCommand()).execute("--quick", "--workloads", "matrix", "--matrix-workers", "4",
                "--matrix-sizes", "10", "--reps", "2", "--protocols", String.join(",", rows), "--heap", "256m",
                "--out", dir.toString());
        assertEquals(0, exit, "exit 2 would mean a product that differs from the local one");

        // matrix.csv holds measured rows only: a failed or wrong product leaves its row out
        List<String> csv = Files.readAllLines(dir.resolve("matrix.csv"), StandardCharsets.UTF_8);
        Map<String, String> calls = new HashMap<>();
        for (String row : csv.subList(1, csv.size())) {
            String[] f = row.split(",", -1);
            assertTrue(Double.parseDouble(f[4]) > 0, row);
            calls.put(f[0] + "/" + f[3], f[8]);
        }
        for (String row : rows) {
            // the manager's calls, all over the row's own transport: 4 blocks of rows; 4 setups, 2 steps of 4, 4 results
            assertEquals(row + " 4", calls.get("simple/" + row), "simple over " + row + " in " + calls);
            assertEquals(row + " 16", calls.get("cannon/" + row), "Cannon over " + row + " in " + calls);
        }
        assertEquals(8, calls.size(), calls.toString());

        String md = Files.readString(dir.resolve("matrix.md"), StandardCharsets.UTF_8);
        assertTrue(md.contains("| ÷ socket | ÷ rmi | CPU ms | CPU wait ms | calls per product |"), md);
        assertTrue(md.contains("| 10 | rmi *(plain Java)* | ") && md.contains("| 10 | socket *(plain Java)* | "), md);
        assertTrue(md.contains("1.00 / 1.00 | "), "a baseline divided by itself: " + md);
    }

    @Test
    void progressWithoutATerminalPrintsWholeLinesOnly() {
        java.io.ByteArrayOutputStream bytes = new java.io.ByteArrayOutputStream();
        Progress.PlainLines lines = new Progress.PlainLines(new java.io.PrintStream(bytes, true, StandardCharsets.UTF_8));
        lines.accept("\rbench  10% [=>   ] 1/10 (0:00:01 / 0:00:09) list 10");
        lines.accept("\rbench  20% [==>  ] 2/10 (0:00:02 / 0:00:08) list 100");   // within the interval: not printed yet
        lines.close();   // the last state is printed at the end
        String out = bytes.toString(StandardCharsets.UTF_8);
        assertEquals(-1, out.indexOf('\r'), out);
        assertEquals(List.of("bench  10% [=>   ] 1/10 (0:00:01 / 0:00:09) list 10",
                "bench  20% [==>  ] 2/10 (0:00:02 / 0:00:08) list 100"), out.lines().toList());
    }
}
