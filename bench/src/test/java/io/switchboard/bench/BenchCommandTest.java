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
 * {@code bench --quick} end to end on a tiny sweep, with the server in a forked JVM: the files it
 * writes and their shape. No timing is asserted; these machines are too noisy for that.
 */
class BenchCommandTest {
    @TempDir
    Path dir;

    @Test
    void tcpHasARowOverTcpAndOneOverTheUnixSocket() throws Exception {
        int exit = new CommandLine(new BenchCommand()).execute("--quick", "--sizes", "10", "--reps", "3",
                "--workloads", "empty,doubles", "--protocols", "tcp,tcp-unix,socket", "--heap", "256m", "--out", dir.toString());
        assertEquals(0, exit);
        Set<String> seen = new HashSet<>();
        List<String> csv = Files.readAllLines(dir.resolve("bench.csv"), StandardCharsets.UTF_8);
        for (String row : csv.subList(1, csv.size())) {
            String[] f = row.split(",", -1);
            seen.add(f[0] + "/" + f[2]);
            assertTrue(Long.parseLong(f[7]) > 0, "the tcp rows count their frames through the relay: " + row);
        }
        // without epoll (not Linux) the server has no socket, and the row is left out with a note
        List<String> rows = io.netty.channel.epoll.Epoll.isAvailable() ? List.of("tcp", "tcp-unix") : List.of("tcp");
        for (String workload : List.of("empty", "doubles")) {
            for (String protocol : rows) {
                assertTrue(seen.contains(workload + "/" + protocol), "no row for " + workload + " over " + protocol + ": " + seen);
            }
        }
    }

    @Test
    void theSecurityRowsRunBesideTcpOverTlsWithTheirOwnServers() throws Exception {
        int exit = new CommandLine(new BenchCommand()).execute("--quick", "--sizes", "10", "--reps", "3",
                "--workloads", "doubles", "--protocols", "tcp,tcp-mtls,tcp-mtls-authz", "--heap", "256m", "--out", dir.toString());
        assertEquals(0, exit);
        Map<String, Long> wireBytes = new HashMap<>();
        List<String> csv = Files.readAllLines(dir.resolve("bench.csv"), StandardCharsets.UTF_8);
        for (String row : csv.subList(1, csv.size())) {
            String[] f = row.split(",", -1);
            assertEquals("3", f[8], "timed samples: " + row);
            wireBytes.put(f[2], Long.parseLong(f[7]));
        }
        assertEquals(Set.of("tcp", "tcp-mtls", "tcp-mtls-authz"), wireBytes.keySet());
        // the same frame in TLS records: a record header and an authentication tag more than in plain text
        long tls = wireBytes.get("tcp") + 5 + 16;
        assertTrue(wireBytes.get("tcp-mtls") >= tls, "tcp-mtls goes over TLS: " + wireBytes);
        assertTrue(wireBytes.get("tcp-mtls-authz") >= tls, "tcp-mtls-authz goes over TLS: " + wireBytes);
    }

    @Test
    void quickSweepWritesCsvMarkdownAndPlots() throws Exception {
        int exit = new CommandLine(new BenchCommand()).execute("--quick", "--sizes", "10,1000", "--reps", "3",
                "--workloads", "empty,doubles,list", "--protocols", "socket,rmi,oos,soap", "--heap", "256m", "--out", dir.toString());
        assertEquals(0, exit);

        List<String> csv = Files.readAllLines(dir.resolve("bench.csv"), StandardCharsets.UTF_8);
        assertEquals("workload,size,protocol,median_us,p10_us,p90_us,payload_mb_per_s,wire_bytes,samples,calls_over,fallbacks",
                csv.get(0));
        Set<String> seen = new HashSet<>();
        for (String row : csv.subList(1, csv.size())) {
            String[] f = row.split(",", -1);
            assertEquals(11, f.length, row);
            assertEquals("/", f[9] + "/" + f[10], "no policy row here, so no calls counted by protocol: " + row);
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
        assertTrue(md.contains("÷ socket") && md.contains("÷ soap") && md.contains("÷ rmi"), md);
        assertTrue(md.contains("./switchboard bench --quick"), "the command that reproduces the run");
        assertTrue(md.contains("load average"), md);
        assertTrue(Files.size(dir.resolve("bench-doubles.png")) > 0);
        assertTrue(Files.size(dir.resolve("bench-list.png")) > 0);
    }

    @Test
    void aPolicyRowCountsItsTimedCallsByProtocolAndAPinnedRowDoesNot() throws Exception {
        // two runs: the counts of both add up; grpc is pinned on the same meta-stub as the policies
        int exit = new CommandLine(new BenchCommand()).execute("--quick", "--sizes", "10", "--reps", "6", "--runs", "2",
                "--workloads", "doubles", "--protocols", "adaptive,size,grpc", "--heap", "256m", "--out", dir.toString());
        assertEquals(0, exit);

        Set<String> ways = new HashSet<>(io.switchboard.protocol.spi.Protocols.names());
        ways.add(SwitchboardPeer.TCP_UNIX);
        List<String> csv = Files.readAllLines(dir.resolve("bench.csv"), StandardCharsets.UTF_8);
        assertEquals(Report.CSV_HEADER, csv.get(0));
        String md = Files.readString(dir.resolve("bench.md"), StandardCharsets.UTF_8);
        Set<String> seen = new HashSet<>();
        for (String row : csv.subList(1, csv.size())) {
            String[] f = row.split(",", -1);
            assertEquals(11, f.length, row);
            seen.add(f[2]);
            assertEquals("12", f[8], "timed samples (2 runs of 6): " + row);
            if (f[2].equals("grpc")) {
                assertEquals("", f[9], "a pinned row counts nothing, though its calls reach the same listener: " + row);
                assertEquals("", f[10], row);
                continue;
            }
            long sum = 0;
            StringBuilder note = new StringBuilder("calls over ");
            for (String way : f[9].split(" ")) {
                String[] w = way.split(":");
                assertTrue(ways.contains(w[0]), "a protocol or tcp's way: " + way + " in " + row);
                long n = Long.parseLong(w[1]);
                assertTrue(n > 0, row);
                sum += n;
                note.append(note.length() > "calls over ".length() ? ", " : "").append(w[0]).append(' ').append(n);
            }
            assertEquals(12, sum, "one count per timed call, none for the warm-up: " + row);
            assertEquals(0, Long.parseLong(f[10]), "the server is up, so nothing falls back: " + row);
            assertTrue(md.contains(note + ";") || md.contains(note + " |"), "the note names the same counts: " + note + " in " + md);
        }
        assertEquals(Set.of("adaptive", "size", "grpc"), seen);
    }

    @Test
    void plainLibrariesRunInTheSameTableWithEqualSampleCountsOverTwoRuns() throws Exception {
        List<String> plain = List.of("grpc-plain", "grpc-plain-direct", "axis2", "fory", "socket");
        int exit = new CommandLine(new BenchCommand()).execute("--quick", "--sizes", "10", "--reps", "7", "--runs", "2",
                "--workloads", "empty,doubles,list", "--protocols", String.join(",", plain), "--heap", "256m",
                "--out", dir.toString());
        assertEquals(0, exit);

        List<String> csv = Files.readAllLines(dir.resolve("bench.csv"), StandardCharsets.UTF_8);
        Map<String, Set<String>> samplesPerCell = new HashMap<>();
        Set<String> seen = new HashSet<>();
        for (String row : csv.subList(1, csv.size())) {
            String[] f = row.split(",", -1);
            seen.add(f[0] + "/" + f[2]);
            assertTrue(Long.parseLong(f[7]) > 0, "every plain peer counts its wire bytes: " + row);
            samplesPerCell.computeIfAbsent(f[0] + "/" + f[1], k -> new HashSet<>()).add(f[8]);
        }
        for (String protocol : plain) {
            for (String workload : List.of("empty", "doubles", "list")) {
                boolean expected = !(protocol.equals("axis2") && workload.equals("list"));
                assertEquals(expected, seen.contains(workload + "/" + protocol), workload + " over " + protocol);
            }
        }
        samplesPerCell.forEach((cell, counts) -> assertEquals(Set.of("14"), counts, "samples per protocol in " + cell + " (2 runs of 7)"));

        String md = Files.readString(dir.resolve("bench.md"), StandardCharsets.UTF_8);
        assertTrue(md.contains("÷ grpc-plain") && md.contains("÷ axis2"), md);
        assertTrue(md.contains("not measured: Axis2's POJO binding has no linked lists"), md);
        assertTrue(md.contains("medians of the 2 runs: "), "each run's median beside the pooled figures: " + md);
    }

    @Test
    void withASettleTimeACellIsTimedOnceTheCompilersAreQuietAndSaysSo() throws Exception {
        int exit = new CommandLine(new BenchCommand()).execute("--quick", "--settle", "4", "--sizes", "10", "--reps", "5",
                "--workloads", "doubles", "--protocols", "socket,fory", "--heap", "256m", "--out", dir.toString());
        assertEquals(0, exit);

        String md = Files.readString(dir.resolve("bench.md"), StandardCharsets.UTF_8);
        assertTrue(md.contains("and more until the JIT compilers of both JVMs are quiet (at most 4 s)"), md);
        List<String> csv = Files.readAllLines(dir.resolve("bench.csv"), StandardCharsets.UTF_8);
        assertEquals(3, csv.size(), "a header and one row per protocol: " + csv);
        for (String row : csv.subList(1, csv.size())) {
            // the extra warm-up neither adds samples nor spends the cell's time budget
            assertEquals("5", row.split(",", -1)[8], "timed samples: " + row);
        }
    }

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
