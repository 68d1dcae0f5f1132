package io.switchboard.bench;

import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;

/**
 * Child processes (JVMs running a main class of this class path, or any command) that end with
 * their owner: {@link #close} stops them (SIGTERM, then SIGKILL after a grace period), and a
 * shutdown hook does the same if the owning JVM ends first (Ctrl-C, an uncaught error).
 *
 * <pre>{@code
 * try (ChildJvm children = new ChildJvm()) {
 *     Process worker = children.startJava(List.of("-Xmx192m"), MatrixWorkerMain.class, log, registryUrl, "w0", secret);
 *     ChildJvm.awaitLine(worker, "READY", "matrix worker w0");
 * }
 * }</pre>
 */
public final class ChildJvm implements AutoCloseable {
    /** Flags for short-lived helper JVMs: they start faster (C1 only, serial GC, small heap). */
    public static final List<String> QUICK_FLAGS = List.of("-Xmx192m", "-XX:TieredStopAtLevel=1", "-XX:+UseSerialGC",
            "-Xshare:auto");

    private final List<Process> processes = new CopyOnWriteArrayList<>();
    private final Thread hook = new Thread(this::stopAll, "child-processes-stop");

    public ChildJvm() {
        Runtime.getRuntime().addShutdownHook(hook);
    }

    /** Starts {@code java FLAGS -cp THIS_CLASS_PATH MAIN ARGS}; its standard error goes to {@code log}. */
    public Process startJava(List<String> jvmFlags, Class<?> main, Path log, String... args) throws IOException {
        return start(javaCommand(jvmFlags, main, args), log, Map.of());
    }

    /** Starts any command with {@code env} added to this process's environment; its standard error goes to {@code log}. */
    public Process start(List<String> command, Path log, Map<String, String> env) throws IOException {
        ProcessBuilder builder = new ProcessBuilder(command).redirectError(log.toFile());
        builder.environment().putAll(env);
        Process p = builder.start();
        processes.add(p);
        return p;
    }

    /** The command line that runs {@code main} in a JVM like this one, with this JVM's class path. */
    public static List<String> javaCommand(List<String> jvmFlags, Class<?> main, String... args) {
        List<String> cmd = new ArrayList<>();
        cmd.add(Path.of(System.getProperty("java.home"), "bin", "java").toString());
        cmd.addAll(jvmFlags);
        cmd.addAll(List.of("-cp", System.getProperty("java.class.path"), main.getName()));
        cmd.addAll(List.of(args));
        return cmd;
    }

    /**
     * Reads the process's standard output until a line starts with {@code prefix} and returns it;
     * an IOException naming {@code what} if the process ends first.
     */
    public static String awaitLine(Process p, String prefix, String what) throws IOException {
        BufferedReader out = new BufferedReader(new InputStreamReader(p.getInputStream(), StandardCharsets.UTF_8));
        for (String line = out.readLine(); line != null; line = out.readLine()) {
            if (line.startsWith(prefix)) {
                return line;   // what it prints next is a few lines that fit the pipe's buffer
            }
        }
        throw new IOException(what + " ended before it was ready (exit " + (p.isAlive() ? "-" : p.exitValue()) + ")");
    }

    /** SIGTERM to every child (they unbind in their own shutdown hooks), SIGKILL to those still alive after 10 s. */
    private void stopAll() {
        for (Process p : processes) {
            p.destroy();
        }
        for (Process p : processes) {
            try {
                if (!p.waitFor(10, TimeUnit.SECONDS)) {
                    p.destroyForcibly();
                }
            } catch (InterruptedException e) {
                p.destroyForcibly();
                Thread.currentThread().interrupt();
            }
        }
    }

    @Override
    public void close() {
        stopAll();
        try {
            Runtime.getRuntime().removeShutdownHook(hook);
        } catch (IllegalStateException shuttingDown) {
            // the hook runs (or ran) anyway
        }
    }
}
