package io.switchboard.cli;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.switchboard.bench.ChildJvm;
import io.switchboard.metastub.MetaStub;
import io.switchboard.registry.server.RegistryServer;
import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * {@code ./switchboard demo} as a user runs it, in a JVM of its own: every stage answers exactly,
 * nothing prints a stack trace, and the matrix worker JVMs it starts are gone when it ends,
 * whether it finishes or is stopped with SIGTERM (Ctrl-C) while they still start.
 */
class DemoCommandTest {
    private static final Pattern WORKER = Pattern.compile("^worker .* \\(pid (\\d+)\\) bound itself");
    private static final Pattern STARTING = Pattern.compile("^children .* matrix worker JVMs starting \\(pids ([\\d, ]+)\\)");
    private final List<Process> processes = new ArrayList<>();
    private final List<Long> workerPids = new ArrayList<>();

    @TempDir
    Path dir;

    @AfterEach
    void killLeftovers() {
        processes.forEach(Process::destroyForcibly);
        // a failed test must not leave the demo's workers running
        workerPids.forEach(pid -> ProcessHandle.of(pid).ifPresent(ProcessHandle::destroyForcibly));
    }

    private Process demo() throws IOException {
        Process p = new ProcessBuilder(ChildJvm.javaCommand(List.of("-Xmx512m"), Main.class, "demo"))
                .redirectError(dir.resolve("stderr.txt").toFile()).start();
        processes.add(p);
        return p;
    }

    @Test
    void everyStageAnswersExactlyAndTheWorkerJvmsAreGoneAfterwards() throws Exception {
        Process p = demo();
        String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
        workerPids.addAll(pidsIn(out));
        assertTrue(p.waitFor(3, TimeUnit.MINUTES));
        String err = Files.readString(dir.resolve("stderr.txt"));
        assertEquals(0, p.exitValue(), out + err);
        for (String text : List.of(out, err)) {
            assertFalse(text.contains("\tat ") || text.contains("Exception in"), "a stack trace:\n" + text);
        }
        assertEquals(2, count(out, "equal to the local product, bit for bit"), out);
        assertTrue(out.contains(": recovered (tolerance"), out);
        assertTrue(out.contains("the time course equals the local simulation: true; 5 reports"), out);
        String summary = out.substring(out.indexOf("== summary =="));
        for (String stage : List.of("echo ", "echo, gRPC stopped", "matrix simple", "matrix cannon", "simulation")) {
            String row = summary.lines().filter(l -> l.startsWith(stage)).findFirst().orElseThrow(() -> new AssertionError(
                    stage + " missing from\n" + summary));
            assertTrue(row.contains(" exact "), row);
        }
        String stopped = summary.lines().filter(l -> l.startsWith("echo, gRPC stopped")).findFirst().orElseThrow();
        // the bulk call (2.4 MB) falls back from gRPC to SOAP; the 1,000-node list (about 40 KB) goes over tcp
        assertTrue(stopped.matches("echo, gRPC stopped\\s+2\\s+\\{grpc=1, soap=1, tcp=1}\\s+1\\s+exact.*"), stopped);
        // the size policy puts Cannon's step calls (a job id and a step number) on tcp and the blocks on gRPC
        assertTrue(out.matches("(?s).*step\\s+tcp\\s+8 call\\(s\\).*receiveA grpc\\s+4 call\\(s\\).*"), out);
        List<Long> workers = pidsIn(out);
        assertEquals(4, workers.size(), out);
        assertEquals(workers, out.lines().map(DemoCommandTest::startingPids).filter(l -> !l.isEmpty()).findFirst().orElse(List.of()),
                "the workers that bound themselves are those whose start was announced");
        workers.forEach(pid -> assertGone(pid));
        Matcher logs = Pattern.compile("their logs go to (\\S+)").matcher(out);
        assertTrue(logs.find(), out);
        assertFalse(Files.exists(Path.of(logs.group(1))), "a demo whose every stage answered leaves no log directory behind");
    }

    /**
     * Stopped as soon as it has started its workers, while they still start (their pids come in
     * the demo's first lines): the earliest and hardest moment, since none has bound itself yet.
     */
    @Test
    void sigtermWhileTheWorkerJvmsStartEndsThemToo() throws Exception {
        Process p = demo();
        BufferedReader r = new BufferedReader(new InputStreamReader(p.getInputStream(), StandardCharsets.UTF_8));
        List<Long> workers = new ArrayList<>();
        for (String line = r.readLine(); line != null && workers.isEmpty(); line = r.readLine()) {
            workers.addAll(startingPids(line));
        }
        workerPids.addAll(workers);
        assertEquals(4, workers.size(), "the demo printed 4 worker pids");
        p.destroy();   // SIGTERM, as Ctrl-C would: the demo's shutdown hook stops its children
        assertTrue(p.waitFor(1, TimeUnit.MINUTES));
        workers.forEach(pid -> assertGone(pid));
    }

    /**
     * The echo stage's calls after the first fallback go to SOAP directly, however long that
     * fallback took: with a pause past the default back-off between them (as a starved machine
     * makes), the stopped gRPC is still left out, since the stage's client sets its own back-off.
     */
    @Test
    void callsAfterTheFallbackStayOffTheStoppedProtocolHoweverLongTheFallbackTook() {
        DemoCommand demo = new DemoCommand();
        demo.pauseAfterFirstFallback = MetaStub.Builder.DEFAULT_BACKOFF.plusMillis(500);
        String secret = "demo-test";
        try (RegistryServer registry = RegistryServer.builder().secret(secret).start()) {
            DemoStageResult stopped = demo.echoStage(registry, secret).get(1);
            assertEquals("echo, gRPC stopped", stopped.stage());
            // the bulk call falls back to SOAP; the list after it goes over tcp, not the stopped gRPC
            assertEquals(Map.of("grpc", 1L, "soap", 1L, "tcp", 1L), stopped.attemptsPerProtocol());
            assertEquals(Boolean.TRUE, stopped.ok());
        }
    }

    /** The pids of the demo's line announcing its workers' start; empty for any other line. */
    private static List<Long> startingPids(String line) {
        Matcher m = STARTING.matcher(line);
        return m.find() ? java.util.Arrays.stream(m.group(1).split(", ")).map(Long::parseLong).toList() : List.of();
    }

    private static List<Long> pidsIn(String out) {
        List<Long> pids = new ArrayList<>();
        out.lines().map(WORKER::matcher).filter(Matcher::find).forEach(m -> pids.add(Long.parseLong(m.group(1))));
        return pids;
    }

    /** The process ends within a minute (the shutdown hook waits up to 10 s for each before killing it). */
    private static void assertGone(long pid) {
        ProcessHandle.of(pid).ifPresent(h -> {
            try {
                h.onExit().get(1, TimeUnit.MINUTES);
            } catch (Exception e) {
                throw new AssertionError("worker JVM " + pid + " still runs after the demo ended", e);
            }
        });
    }

    private static int count(String text, String what) {
        int n = 0;
        for (int i = text.indexOf(what); i >= 0; i = text.indexOf(what, i + 1)) {
            n++;
        }
        return n;
    }
}
