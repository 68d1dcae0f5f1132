package io.switchboard.bench;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
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
 * {@code bench --quick} end to end on tiny sweeps, with the server in a forked JVM: the files it
 * writes and their shape. No timing is asserted; these machines are too noisy for that.
 *
 * <p>Each run starts a server JVM and warms both JVMs up, which costs more than the cells; so the
 * class makes two runs, each with the rows of several tests, and each test reads its own part of
 * them. {@link #sweep}: one run of every workload at two sizes, over the plain Java peers, SOAP and
 * tcp's four rows (plain, Unix socket, mutual TLS with and without a policy, on servers of their
 * own). {@link #pooled}: two runs of six samples each with a settle time, over the policies, a
 * pinned protocol, the plain libraries and the in-process row, with the async workload beside.
 */
class BenchCommandTest {
    /** Without epoll (not Linux) the server has no Unix socket, and the tcp-unix row is left out with a note. */
    private static final boolean UNIX_SOCKET = io.netty.channel.epoll.Epoll.isAvailable();
    private static final List<String> SWEEP_PROTOCOLS = List.of("socket", "socket-unix", "rmi", "oos", "soap", "tcp",
            "tcp-unix", "tcp-raw", "tcp-mtls", "tcp-mtls-authz");
    private static final List<String> POLICIES = List.of("adaptive", "size");
    private static final List<String> PLAIN = List.of("grpc-plain", "grpc-plain-direct", "axis2", "fory", "socket");
    private static final List<String> WORKLOADS = List.of("empty", "doubles", "list");

    @TempDir
    static Path root;
    static Run sweep;
    static Run pooled;

    @BeforeAll
    static void runTheHarness() throws Exception {
        sweep = Run.of(root.resolve("sweep"), "--quick", "--sizes", "10,1000", "--reps", "3",
                "--workloads", String.join(",", WORKLOADS), "--protocols", String.join(",", SWEEP_PROTOCOLS), "--heap", "256m");
        List<String> pooledProtocols = new ArrayList<>(POLICIES);
        pooledProtocols.add("grpc");   // pinned on a meta-stub of its own
        pooledProtocols.add(SwitchboardPeer.TCP_LOOKUP);   // pinned on the same stub as the policies
        pooledProtocols.addAll(PLAIN);
        pooledProtocols.addAll(List.of("local", "soap"));
        // a budget of 20 s instead of --quick's 2: pinned to one CPU of a loaded machine, a call of the slowest row
        // (bare Axis2) can take a third of a second, and the cut at the budget would leave every row 9 samples, not 12
        pooled = Run.of(root.resolve("pooled"), "--quick", "--settle", "1", "--budget", "20", "--sizes", "10", "--reps", "6",
                "--runs", "2",
                "--workloads", String.join(",", WORKLOADS) + ",async", "--async-millis", "200",
                "--protocols", String.join(",", pooledProtocols), "--heap", "256m");
    }

    @Test
    void tcpHasARowOverTcpAndOneOverTheUnixSocket() {
        assertEquals(0, sweep.exit);
        List<String> rows = UNIX_SOCKET ? List.of("tcp", "tcp-unix") : List.of("tcp");
        for (String workload : WORKLOADS) {
            for (String protocol : rows) {
                assertTrue(sweep.seen().contains(workload + "/" + protocol), "no row for " + workload + " over " + protocol
                        + ": " + sweep.seen());
            }
        }
        for (String[] f : sweep.rows) {
            if (f[2].startsWith("tcp")) {
                assertTrue(Long.parseLong(f[7]) > 0, "the tcp rows count their frames through the relay: " + String.join(",", f));
            }
        }
    }

    @Test
    void theRawSocketHasARowOverAUnixSocketToo() {
        assertEquals(0, sweep.exit);
        for (String workload : WORKLOADS) {
            assertTrue(sweep.seen().contains(workload + "/socket-unix"), "no row for " + workload + " over socket-unix: "
                    + sweep.seen());
        }
        Map<String, Long> wireBytes = new HashMap<>();
        for (String[] f : sweep.rows) {
            if (f[0].equals("list") && f[1].equals("1000")) {
                wireBytes.put(f[2], Long.parseLong(f[7]));
            }
        }
        assertEquals(wireBytes.get("socket"), wireBytes.get("socket-unix"), "the same bytes over either socket: " + wireBytes);
    }

    @Test
    void aHandWrittenClientCallsTheTcpServerOnItsUnixSocket() {
        assumeTrue(UNIX_SOCKET, "no Unix socket on the tcp server here");
        assertEquals(0, sweep.exit);
        Map<String, Long> wireBytes = new HashMap<>();
        for (String[] f : sweep.rows) {
            if (f[0].equals("doubles") && f[1].equals("10")) {
                wireBytes.put(f[2], Long.parseLong(f[7]));
            }
        }
        assertTrue(sweep.seen().containsAll(List.of("empty/tcp-raw", "doubles/tcp-raw")), sweep.seen().toString());
        assertFalse(sweep.seen().contains("list/tcp-raw"), "empty calls and double[] only: " + sweep.seen());
        // service, method, call id, time left and correlation id, as the meta-stub's tcp client writes them
        assertEquals(wireBytes.get("tcp-unix"), wireBytes.get("tcp-raw"), "the same frame as tcp-unix's: " + wireBytes);
    }

    @Test
    void theSecurityRowsRunBesideTcpOverTlsWithTheirOwnServers() {
        assertEquals(0, sweep.exit);
        Map<String, Long> wireBytes = new HashMap<>();
        Set<String> protocols = new HashSet<>();
        for (String[] f : sweep.rows) {
            assertEquals("3", f[8], "timed samples: " + String.join(",", f));
            protocols.add(f[2]);
            if (f[0].equals("doubles") && f[1].equals("10")) {
                wireBytes.put(f[2], Long.parseLong(f[7]));
            }
        }
        Set<String> asked = new HashSet<>(SWEEP_PROTOCOLS);
        if (!UNIX_SOCKET) {
            asked.remove("tcp-unix");
            asked.remove("tcp-raw");
        }
        assertEquals(asked, protocols, "every row asked for, the two secured ones among them");
        // the same frame in TLS records: a record header and an authentication tag more than in plain text
        long tls = wireBytes.get("tcp") + 5 + 16;
        assertTrue(wireBytes.get("tcp-mtls") >= tls, "tcp-mtls goes over TLS: " + wireBytes);
        assertTrue(wireBytes.get("tcp-mtls-authz") >= tls, "tcp-mtls-authz goes over TLS: " + wireBytes);
    }

    @Test
    void quickSweepWritesCsvMarkdownAndPlots() throws Exception {
        assertEquals(0, sweep.exit);
        assertEquals("workload,size,protocol,median_us,p10_us,p90_us,payload_mb_per_s,wire_bytes,samples,calls_over,fallbacks",
                sweep.header);
        for (String[] f : sweep.rows) {
            String row = String.join(",", f);
            assertEquals(11, f.length, row);
            assertEquals("/", f[9] + "/" + f[10], "no policy row here, so no calls counted by protocol: " + row);
            for (int i = 3; i <= 5; i++) {
                assertTrue(Double.parseDouble(f[i]) > 0, row);
            }
            assertTrue(Double.parseDouble(f[5]) >= Double.parseDouble(f[3]), "p90 >= median: " + row);
            assertTrue(f[0].equals("empty") ? f[6].isEmpty() : Double.parseDouble(f[6]) > 0, row);
            assertTrue(Long.parseLong(f[7]) > 0, "every peer here counts its wire bytes: " + row);
        }
        for (String workload : WORKLOADS) {
            for (String protocol : List.of("socket", "rmi", "oos", "soap")) {
                assertTrue(sweep.seen().contains(workload + "/" + protocol), "no row for " + workload + " over " + protocol);
            }
        }

        String md = sweep.markdown();
        assertTrue(md.contains("÷ socket") && md.contains("÷ soap") && md.contains("÷ rmi"), md);
        assertTrue(md.contains("./switchboard bench --quick"), "the command that reproduces the run");
        assertTrue(md.contains("load average"), md);
        assertTrue(Files.size(sweep.dir.resolve("bench-doubles.png")) > 0);
        assertTrue(Files.size(sweep.dir.resolve("bench-list.png")) > 0);
    }

    @Test
    void aPolicyRowCountsItsTimedCallsByProtocolAndAPinnedRowDoesNot() throws Exception {
        // two runs: the counts of both add up
        assertEquals(0, pooled.exit);
        assertEquals(Report.CSV_HEADER, pooled.header);
        Set<String> ways = new HashSet<>(io.switchboard.protocol.spi.Protocols.names());
        ways.addAll(SwitchboardPeer.UNIX_WAYS.keySet());   // tcp-unix, grpc-unix
        String md = pooled.markdown();
        int policyRows = 0;
        int lookupRows = 0;
        for (String[] f : pooled.rows) {
            String row = String.join(",", f);
            assertEquals(11, f.length, row);
            assertEquals("12", f[8], "timed samples (2 runs of 6): " + row);
            if (f[2].equals(SwitchboardPeer.TCP_LOOKUP)) {
                // pinned, but counted: on the policies' stub its calls take the Unix socket as theirs do
                lookupRows++;
                assertEquals(UNIX_SOCKET ? "tcp-unix:12" : "tcp:12", f[9], row);
                assertEquals("0", f[10], row);
                continue;
            }
            if (!POLICIES.contains(f[2])) {
                // grpc's calls go through a meta-stub of its own, and the plain peers' are no one's choice
                assertEquals("", f[9], "a pinned or plain row counts nothing: " + row);
                assertEquals("", f[10], row);
                continue;
            }
            policyRows++;
            long sum = 0;
            StringBuilder note = new StringBuilder("calls over ");
            for (String way : f[9].split(" ")) {
                String[] w = way.split(":");
                assertTrue(ways.contains(w[0]), "a protocol or its way: " + way + " in " + row);
                long n = Long.parseLong(w[1]);
                assertTrue(n > 0, row);
                sum += n;
                note.append(note.length() > "calls over ".length() ? ", " : "").append(w[0]).append(' ').append(n);
            }
            assertEquals(12, sum, "one count per timed call, none for the warm-up or the settling: " + row);
            assertEquals(0, Long.parseLong(f[10]), "the server is up, so nothing falls back: " + row);
            assertTrue(md.contains(note + ";") || md.contains(note + " |"), "the note names the same counts: " + note + " in " + md);
        }
        assertEquals(POLICIES.size() * WORKLOADS.size(), policyRows, "a row per policy and workload");
        assertEquals(WORKLOADS.size(), lookupRows, "a tcp-lookup row per workload");
        assertTrue(pooled.seen().containsAll(List.of("doubles/adaptive", "doubles/size", "doubles/grpc")), pooled.seen().toString());
    }

    @Test
    void plainLibrariesRunInTheSameTableWithEqualSampleCountsOverTwoRuns() throws Exception {
        assertEquals(0, pooled.exit);
        Map<String, Set<String>> samplesPerCell = new HashMap<>();
        for (String[] f : pooled.rows) {
            if (PLAIN.contains(f[2])) {
                assertTrue(Long.parseLong(f[7]) > 0, "every plain peer counts its wire bytes: " + String.join(",", f));
            }
            samplesPerCell.computeIfAbsent(f[0] + "/" + f[1], k -> new HashSet<>()).add(f[8]);
        }
        for (String protocol : PLAIN) {
            for (String workload : WORKLOADS) {
                boolean expected = !(protocol.equals("axis2") && workload.equals("list"));
                assertEquals(expected, pooled.seen().contains(workload + "/" + protocol), workload + " over " + protocol);
            }
        }
        assertEquals(Set.of("empty/0", "doubles/10", "list/10"), samplesPerCell.keySet());
        samplesPerCell.forEach((cell, counts) -> assertEquals(Set.of("12"), counts, "samples per protocol in " + cell + " (2 runs of 6)"));

        String md = pooled.markdown();
        assertTrue(md.contains("÷ grpc-plain") && md.contains("÷ axis2"), md);
        assertTrue(md.contains("not measured: Axis2's POJO binding has no linked lists"), md);
        assertTrue(md.contains("medians of the 2 runs: "), "each run's median beside the pooled figures: " + md);
    }

    @Test
    void withASettleTimeACellIsTimedOnceTheCompilersAreQuietAndSaysSo() throws Exception {
        assertEquals(0, pooled.exit);
        assertTrue(pooled.markdown().contains("and more until the JIT compilers of both JVMs are quiet (at most 1 s)"),
                pooled.markdown());
        // every row asked for, once per workload, less Axis2's list
        int protocols = POLICIES.size() + 2 + PLAIN.size() + 2;   // the policies, grpc and tcp-lookup, plain, local and soap
        assertEquals(protocols * WORKLOADS.size() - 1, pooled.rows.size(), "one row per protocol and cell: " + pooled.seen());
        assertEquals(pooled.rows.size(), pooled.seen().size(), "no row twice: " + pooled.seen());
        for (String[] f : pooled.rows) {
            // the extra warm-up neither adds samples nor spends the cell's time budget
            assertEquals("12", f[8], "timed samples: " + String.join(",", f));
        }
    }

    @Test
    void quickRunWritesTheInProcessRowAndTheAsyncTableWithEveryAnswerChecked() throws Exception {
        assertEquals(0, pooled.exit, "exit 2 would mean a wrong answer or a local call that left the process");
        String local = pooled.rows.stream().filter(f -> f[0].equals("doubles") && f[1].equals("10") && f[2].equals("local"))
                .map(f -> String.join(",", f)).findFirst().orElseThrow();
        assertEquals("", local.split(",", -1)[7], "nothing on a wire in process, so no wire bytes: " + local);
        assertTrue(pooled.markdown().contains("| 10 | local | "));

        List<String> async = Files.readAllLines(pooled.dir.resolve("async.csv"), StandardCharsets.UTF_8);
        assertEquals(AsyncBench.CSV_HEADER, async.get(0));
        Set<String> cells = new HashSet<>();
        for (String row : async.subList(1, async.size())) {
            String[] f = row.split(",", -1);
            assertEquals("", f[7], "no failure and no wrong answer: " + row);
            assertTrue(Long.parseLong(f[4]) > 0, "answers received and checked: " + row);
            cells.add(f[0] + "/" + f[2] + "/" + f[3]);
        }
        // the Switchboard protocols and grpc-plain (grpc-java alone, the reference); policies and the other plain peers have no async rows
        for (String protocol : List.of("local", "grpc", "soap", "grpc-plain")) {
            for (String cell : List.of("blocking/1", "async/1", "async/8", "async/64")) {
                assertTrue(cells.contains(protocol + "/" + cell), "no " + cell + " over " + protocol + " in " + cells);
            }
        }
        assertEquals(16, cells.size(), cells.toString());
        assertTrue(Files.readString(pooled.dir.resolve("async.md"), StandardCharsets.UTF_8).contains("./switchboard bench --quick"));
        assertTrue(pooled.markdown().contains("## async"));
    }

    /** One run of the harness: its exit code and bench.csv, split into fields. */
    record Run(Path dir, int exit, String header, List<String[]> rows) {
        static Run of(Path dir, String... args) throws Exception {
            List<String> all = new ArrayList<>(List.of(args));
            all.addAll(List.of("--out", dir.toString()));
            int exit = new CommandLine(new BenchCommand()).execute(all.toArray(String[]::new));
            Path csv = dir.resolve("bench.csv");
            if (!Files.exists(csv)) {
                return new Run(dir, exit, "", List.of());
            }
            List<String> lines = Files.readAllLines(csv, StandardCharsets.UTF_8);
            return new Run(dir, exit, lines.get(0), lines.subList(1, lines.size()).stream().map(r -> r.split(",", -1)).toList());
        }

        /** workload/protocol of every row. */
        Set<String> seen() {
            Set<String> seen = new HashSet<>();
            rows.forEach(f -> seen.add(f[0] + "/" + f[2]));
            return seen;
        }

        String markdown() throws java.io.IOException {
            return Files.readString(dir.resolve("bench.md"), StandardCharsets.UTF_8);
        }
    }
}
