package io.switchboard.testing;

import io.switchboard.protocol.DaemonThreads;
import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.io.OutputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;

/**
 * A main class of the test class path in a JVM of its own: for tests of a separate process (a
 * client in another JVM, a command line as a user runs it) and of one killed with SIGKILL. Closing
 * kills it.
 *
 * <pre>{@code
 * try (ChildJvm registry = ChildJvm.start(dir.resolve("registry.err"), Main.class, "registry", "--port", "0")) {
 *     String url = registry.await("registry");
 * }
 * }</pre>
 *
 * A daemon thread reads the child's standard output as it comes, so a child that prints more than
 * a pipe holds never blocks on it, and {@link #await} can give up after a time instead of hanging
 * a test on a child that stopped talking.
 */
public final class ChildJvm implements AutoCloseable {
    /** How long {@link #await(String)} waits for its line: far above any start-up seen, below a test's patience. */
    public static final Duration DEFAULT_AWAIT = Duration.ofMinutes(2);
    /** Put on the queue once the output ended, so that a reader waiting for a line learns that none will come. */
    private static final String END = new String("end of output");

    private final Process process;
    private final Path stderr;
    private final BlockingQueue<String> lines = new LinkedBlockingQueue<>();
    /** Every line read so far, those {@link #await} skipped or returned included. */
    private final List<String> output = java.util.Collections.synchronizedList(new ArrayList<>());

    private ChildJvm(Process process, Path stderr, String name) {
        this.process = process;
        this.stderr = stderr;
        DaemonThreads.start(this::readOutput, "child-output-" + name);
    }

    private void readOutput() {
        try (BufferedReader out = new BufferedReader(new InputStreamReader(process.getInputStream(),
                StandardCharsets.UTF_8))) {
            for (String line = out.readLine(); line != null; line = out.readLine()) {
                output.add(line);
                lines.add(line);
            }
        } catch (IOException e) {
            // the process was killed under the reader: the output ends here
        } finally {
            lines.add(END);
        }
    }

    /** {@code java -Xmx256m -cp THIS_CLASS_PATH MAIN ARGS}, standard error to {@code stderr}. */
    public static ChildJvm start(Path stderr, Class<?> main, String... args) throws IOException {
        return start(List.of(), List.of("-Xmx256m"), stderr, main, args);
    }

    /**
     * {@code LAUNCHER... java JVM_OPTIONS -cp THIS_CLASS_PATH MAIN ARGS}: the launcher runs the JVM
     * somewhere else, e.g. {@code ip netns exec NS} in a network namespace (it must exec the
     * command, so that killing the process kills the JVM).
     */
    public static ChildJvm start(List<String> launcher, List<String> jvmOptions, Path stderr, Class<?> main,
                                 String... args) throws IOException {
        List<String> cmd = new ArrayList<>(launcher);
        cmd.addAll(javaCommand(jvmOptions, main, args));
        return new ChildJvm(new ProcessBuilder(cmd).redirectError(stderr.toFile()).start(), stderr,
                main.getSimpleName());
    }

    /**
     * The command line of {@link #start}: this JVM's {@code java}, the options, quick start-up (the
     * JIT's first tier, unless the options set a tier of their own: a child that runs hot loops for
     * minutes wants the full JIT), this class path.
     */
    public static List<String> javaCommand(List<String> jvmOptions, Class<?> main, String... args) {
        List<String> cmd = new ArrayList<>();
        cmd.add(Path.of(System.getProperty("java.home"), "bin", "java").toString());
        cmd.addAll(jvmOptions);
        if (jvmOptions.stream().noneMatch(o -> o.startsWith("-XX:TieredStopAtLevel="))) {
            cmd.add("-XX:TieredStopAtLevel=1");
        }
        cmd.addAll(List.of("-cp", System.getProperty("java.class.path"), main.getName()));
        cmd.addAll(List.of(args));
        return cmd;
    }

    /**
     * Everything the process prints until it ends; an {@link IllegalStateException} with its
     * standard error when it exits with a status other than 0 or is still running after {@code limit}.
     */
    public String outputUntilExit(Duration limit) throws IOException, InterruptedException {
        long end = System.nanoTime() + limit.toNanos();
        StringBuilder all = new StringBuilder();
        for (String line = lines.poll(limit.toMillis(), TimeUnit.MILLISECONDS); line != END;
             line = lines.poll(Math.max(0, end - System.nanoTime()), TimeUnit.NANOSECONDS)) {
            if (line == null) {
                throw new IllegalStateException("the child process did not end within " + limit + ":\n" + all);
            }
            all.append(line).append('\n');
        }
        lines.add(END);
        if (!process.waitFor(Math.max(0, end - System.nanoTime()), TimeUnit.NANOSECONDS)) {
            throw new IllegalStateException("the child process did not end within " + limit);
        }
        if (process.exitValue() != 0) {
            throw new IllegalStateException("the child process exited with " + process.exitValue() + ":\n" + all
                    + Files.readString(stderr));
        }
        return all.toString();
    }

    /**
     * Every line the child has printed so far, in order, whether or not {@link #await} read past
     * it. Once a line was awaited, every line before it is here.
     */
    public List<String> output() {
        synchronized (output) {
            return List.copyOf(output);
        }
    }

    /** The process, to send it SIGTERM ({@code destroy}) or wait for it. */
    public Process process() {
        return process;
    }

    /** Reads output until a line starts with {@code prefix}; returns the rest of it. Waits {@link #DEFAULT_AWAIT} at most. */
    public String await(String prefix) throws IOException {
        return await(prefix, DEFAULT_AWAIT);
    }

    /**
     * Reads output until a line starts with {@code prefix} and returns the rest of it; lines
     * before it are skipped. An {@link IllegalStateException} with the end of the child's
     * standard error when the output ends first or nothing matched within {@code limit}.
     */
    public String await(String prefix, Duration limit) throws IOException {
        long end = System.nanoTime() + limit.toNanos();
        try {
            while (true) {
                String line = lines.poll(Math.max(0, end - System.nanoTime()), TimeUnit.NANOSECONDS);
                if (line == null) {
                    throw new IllegalStateException("the child process printed no line starting with '" + prefix
                            + "' within " + limit + stderrTail());
                }
                if (line == END) {
                    lines.add(END);
                    throw new IllegalStateException("the child process ended its output before printing '" + prefix
                            + "'" + exitStatus() + outputTail() + stderrTail());
                }
                if (line.startsWith(prefix)) {
                    return line.substring(prefix.length()).trim();
                }
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException("interrupted while waiting for '" + prefix + "'", e);
        }
    }

    /** Writes one line to the child's standard input: a command to a child that reads them. */
    public void send(String line) throws IOException {
        OutputStream in = process.getOutputStream();
        in.write((line + "\n").getBytes(StandardCharsets.UTF_8));
        in.flush();
    }

    /** Sends {@code command} and returns the rest of the answer line that starts with the command's first word. */
    public String ask(String command, Duration limit) throws IOException {
        send(command);
        return await(command.split(" ", 2)[0] + " ", limit);
    }

    private String exitStatus() {
        try {
            return process.waitFor(5, TimeUnit.SECONDS) ? " (exit " + process.exitValue() + ")" : " (still running)";
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            return "";
        }
    }

    private String outputTail() {
        List<String> all = output();
        return "; the end of its standard output:\n" + String.join("\n", all.subList(Math.max(0, all.size() - 20),
                all.size()));
    }

    private String stderrTail() {
        try {
            String err = Files.readString(stderr);
            return "; the end of its standard error (" + stderr + "):\n"
                    + err.substring(Math.max(0, err.length() - 4000));
        } catch (IOException e) {
            return "";
        }
    }

    /**
     * SIGTERM, as Ctrl-C or a service manager stops a process: its shutdown hooks run, and what it
     * prints on the way out can still be {@link #await}ed. ({@code Process.destroy} sends the same
     * signal but closes the streams at once, so that nothing printed after it can be read.)
     */
    public void terminate() {
        process.toHandle().destroy();
    }

    /** SIGKILL: no shutdown hook, no unbind, no flush. */
    public void kill() throws InterruptedException {
        process.destroyForcibly();
        if (!process.waitFor(30, TimeUnit.SECONDS)) {
            throw new IllegalStateException("the child process did not die");
        }
    }

    @Override
    public void close() throws InterruptedException {
        kill();
    }
}
