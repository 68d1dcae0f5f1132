package io.switchboard.bench;

import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;

/**
 * The forked {@link BenchServer} JVM, started with this JVM's class path and explicit heap and GC
 * flags. Its standard error goes to a log file; its standard input and output are the control
 * channel.
 *
 * <pre>{@code
 * try (ServerProcess server = ServerProcess.start(List.of("-Xms2g", "-Xmx2g", "-XX:+UseG1GC"), log)) {
 *     int port = Integer.parseInt(server.get("socket"));
 *     server.gc();
 * }
 * }</pre>
 */
final class ServerProcess implements AutoCloseable {
    private final Process process;
    private final BufferedReader out;
    private final PrintStream in;
    private final Map<String, String> ready = new HashMap<>();
    private final List<String> command;

    /** How long the server may take to say it is ready: every server of every row starts, on a busy machine too. */
    static final java.time.Duration READY_TIMEOUT = java.time.Duration.ofMinutes(2);

    private ServerProcess(List<String> command, Path log) throws IOException {
        this(command, log, READY_TIMEOUT);
    }

    /** Starts {@code command} and waits for its ready line; a server silent for {@code readyTimeout} is stopped. */
    ServerProcess(List<String> command, Path log, java.time.Duration readyTimeout) throws IOException {
        this.command = command;
        this.process = new ProcessBuilder(command).redirectError(log.toFile()).start();
        this.out = new BufferedReader(new InputStreamReader(process.getInputStream(), StandardCharsets.UTF_8));
        this.in = new PrintStream(process.getOutputStream(), true, StandardCharsets.UTF_8);
        // a server that hangs before its ready line would hold the bench forever: its output ends when it is stopped
        java.util.concurrent.atomic.AtomicBoolean timedOut = new java.util.concurrent.atomic.AtomicBoolean();
        Thread watchdog = new Thread(() -> {
            try {
                if (!process.waitFor(readyTimeout.toMillis(), TimeUnit.MILLISECONDS)) {
                    timedOut.set(true);
                    process.destroyForcibly();
                }
            } catch (InterruptedException ready) {
                // the server said it is ready
            }
        }, "bench-server-ready-watch");
        watchdog.setDaemon(true);
        watchdog.start();
        try {
            for (String line = out.readLine(); ; line = out.readLine()) {
                if (line == null) {
                    process.destroyForcibly();
                    throw new IOException(timedOut.get()
                            ? "the bench server did not say it was ready within " + readyTimeout.toSeconds() + " s and was stopped; see " + log
                            : "the bench server exited before it was ready; see " + log);
                }
                if (line.startsWith("READY ")) {
                    for (String kv : line.substring(6).trim().split(" ")) {
                        int eq = kv.indexOf('=');
                        ready.put(kv.substring(0, eq), kv.substring(eq + 1));
                    }
                    return;
                }
            }
        } finally {
            watchdog.interrupt();
        }
    }

    /**
     * The flags among {@code jvmArgs} that choose the JVM's page sizes ({@code -XX:+UseTransparentHugePages},
     * {@code -XX:+UseLargePages}, {@code -XX:LargePageSizeInBytes=...}, and their {@code -} forms):
     * what the bench passes on from its own JVM to the server's, so that both sides of a call run
     * their code and heap on the same pages (docs/benchmarks/small-calls.md, "Huge pages").
     */
    static List<String> pageSizeFlags(List<String> jvmArgs) {
        List<String> kept = new ArrayList<>();
        for (String a : jvmArgs) {
            if (a.equals("-XX:+UseTransparentHugePages") || a.equals("-XX:-UseTransparentHugePages")
                    || a.equals("-XX:+UseLargePages") || a.equals("-XX:-UseLargePages")
                    || a.startsWith("-XX:LargePageSizeInBytes=")) {
                kept.add(a);
            }
        }
        return kept;
    }

    static ServerProcess start(List<String> jvmFlags, Path log) throws IOException {
        return start(jvmFlags, log, List.of());
    }

    /** As {@link #start(List, Path)}, with arguments for {@link BenchServer#main}. */
    static ServerProcess start(List<String> jvmFlags, Path log, List<String> args) throws IOException {
        List<String> cmd = new ArrayList<>();
        cmd.add(Path.of(System.getProperty("java.home"), "bin", "java").toString());
        cmd.addAll(jvmFlags);
        cmd.addAll(List.of("-cp", System.getProperty("java.class.path"), BenchServer.class.getName()));
        cmd.addAll(args);
        return new ServerProcess(cmd, log);
    }

    /** A value from the server's ready line: {@code registry}, {@code socket}, {@code oos}, {@code rmi}, {@code pid}. */
    String get(String key) {
        return ready.get(key);
    }

    long pid() {
        return process.pid();
    }

    /** The JVM flags the server runs with (without the class path). */
    List<String> jvmFlags() {
        return command.subList(1, command.indexOf("-cp"));
    }

    /** Runs a full collection in the server and waits for it. */
    void gc() throws IOException {
        in.println("gc");
        for (String line = out.readLine(); line != null; line = out.readLine()) {
            if (line.equals("gc-done")) {
                return;
            }
        }
        throw new IOException("the bench server exited");
    }

    /** Milliseconds the server's JIT compilers have worked so far. */
    long compileMillis() throws IOException {
        in.println("jit");
        for (String line = out.readLine(); line != null; line = out.readLine()) {
            if (line.startsWith("jit ")) {
                return Long.parseLong(line.substring(4).trim());
            }
        }
        throw new IOException("the bench server exited");
    }

    /** The server's phase marks since the last call, as {@code PHASE_ORDINAL:NANOS} pairs (marks must be on there). */
    String drainPhaseMarks() throws IOException {
        in.println("phases");
        for (String line = out.readLine(); line != null; line = out.readLine()) {
            if (line.startsWith("phases ")) {
                return line.substring(7);
            }
        }
        throw new IOException("the bench server exited");
    }

    @Override
    public void close() {
        in.println("quit");
        in.close();
        try {
            if (!process.waitFor(10, TimeUnit.SECONDS)) {
                process.destroyForcibly();
            }
        } catch (InterruptedException e) {
            process.destroyForcibly();
            Thread.currentThread().interrupt();
        }
    }
}
