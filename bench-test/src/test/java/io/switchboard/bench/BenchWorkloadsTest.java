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
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import picocli.CommandLine;

/**
 * {@code bench} end to end on its other workloads (the phase breakdown, the matrix) and its progress
 * line: the files each writes and their shape. No timing is asserted. A class apart from
 * {@link BenchCommandTest} so that the two run in test JVMs side by side; one matrix run serves
 * both matrix tests, since its worker JVMs cost more than its products.
 */
class BenchWorkloadsTest {
    /** The matrix's policies (soap, grpc, tcp) and its plain Java baselines (rmi, socket); oos, also asked for, is none. */
    private static final List<String> MATRIX_ROWS = List.of("soap", "grpc", "tcp", "rmi", "socket");
    private static final List<String> MATRIX_SIZES = List.of("6", "10");

    @TempDir
    static Path root;
    /**
     * One matrix run on a grid of four workers, whose rows two tests read; the budget of --quick (10 s) would
     * skip a size whose products, judged from the size before on a loaded machine, might take over 2.5 s.
     */
    static Matrix matrix;

    @BeforeAll
    static void runTheMatrix() throws Exception {
        Path dir = root.resolve("matrix");
        int exit = new CommandLine(new BenchCommand()).execute("--quick", "--workloads", "matrix", "--matrix-workers", "4",
                "--matrix-sizes", String.join(",", MATRIX_SIZES), "--reps", "2", "--budget", "40",
                "--protocols", "soap,grpc,oos,tcp,rmi,socket", "--heap", "256m", "--out", dir.toString());
        Path csv = dir.resolve("matrix.csv");
        List<String> lines = Files.exists(csv) ? Files.readAllLines(csv, StandardCharsets.UTF_8) : List.of("");
        matrix = new Matrix(dir, exit, lines.get(0), lines.subList(1, lines.size()).stream().map(r -> r.split(",", -1)).toList());
    }

    /** The matrix run: its exit code and matrix.csv, split into fields. */
    record Matrix(Path dir, int exit, String header, List<String[]> rows) {
    }

    @Test
    void phaseBreakdownHasEveryPhaseOfSoapAndGrpcAndAGanttChart() throws Exception {
        Path dir = root.resolve("phases");
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
        assertEquals(0, matrix.exit, "exit 2 would mean a product that differs from the local one");
        assertEquals(MatrixReport.CSV_HEADER, matrix.header);
        Set<String> seen = new HashSet<>();
        for (String[] f : matrix.rows) {
            String row = String.join(",", f);
            seen.add(f[0] + "/" + f[1] + "/" + f[3]);
            assertTrue(Double.parseDouble(f[4]) > 0, row);
            assertTrue(f[8].contains(f[3]), "a pinned policy's calls went over its protocol: " + row);
            assertTrue(Double.parseDouble(f[9]) > 0, "the JVMs' CPU time per product, from the scheduler: " + row);
            assertTrue(Double.parseDouble(f[10]) >= 0, "their wait for a CPU per product: " + row);
        }
        for (String algorithm : List.of("simple", "cannon")) {
            for (String n : MATRIX_SIZES) {
                for (String row : MATRIX_ROWS) {
                    assertTrue(seen.contains(algorithm + "/" + n + "/" + row), "no row " + algorithm + " " + n + " " + row);
                }
            }
        }
        assertEquals(2 * MATRIX_SIZES.size() * MATRIX_ROWS.size(), seen.size(), "oos is no matrix row: " + seen);
        assertTrue(Files.notExists(matrix.dir.resolve("bench.csv")), "no sweep workload was asked for");
        assertTrue(Files.size(matrix.dir.resolve("matrix.png")) > 0);
    }

    @Test
    void matrixBaselinesAndTcpRunInTheSameRoundsOnAGridOfFourWorkersEveryProductExact() throws Exception {
        assertEquals(0, matrix.exit, "exit 2 would mean a product that differs from the local one");
        // matrix.csv holds measured rows only: a failed or wrong product leaves its row out
        Map<String, String> calls = new HashMap<>();
        for (String[] f : matrix.rows) {
            calls.put(f[0] + "/" + f[1] + "/" + f[3], f[8]);
        }
        for (String n : MATRIX_SIZES) {
            for (String row : MATRIX_ROWS) {
                // the manager's calls, all over the row's own transport: 4 blocks of rows; 4 setups, 2 steps of 4, 4 results
                assertEquals(row + " 4", calls.get("simple/" + n + "/" + row), "simple over " + row + " in " + calls);
                assertEquals(row + " 16", calls.get("cannon/" + n + "/" + row), "Cannon over " + row + " in " + calls);
            }
        }
        assertEquals(matrix.rows.size(), calls.size(), "one row per algorithm, size and row: " + calls);

        String md = Files.readString(matrix.dir.resolve("matrix.md"), StandardCharsets.UTF_8);
        assertTrue(md.contains("| ÷ socket | ÷ rmi | ÷ soap | CPU ms | CPU wait ms | calls per product |"), md);
        assertTrue(md.contains("| 6 | rmi *(plain Java)* | ") && md.contains("| 10 | socket *(plain Java)* | "), md);
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
