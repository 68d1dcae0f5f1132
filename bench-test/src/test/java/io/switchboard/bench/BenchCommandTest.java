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
}
