package io.switchboard.testing;

import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
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
 */
public final class ChildJvm implements AutoCloseable {
    private final Process process;
    private final BufferedReader out;
    private final Path stderr;

    private ChildJvm(Process process, Path stderr) {
        this.process = process;
        this.stderr = stderr;
        this.out = new BufferedReader(new InputStreamReader(process.getInputStream(), StandardCharsets.UTF_8));
    }

    /** {@code java -Xmx256m -cp THIS_CLASS_PATH MAIN ARGS}, standard error to {@code stderr}. */
    public static ChildJvm start(Path stderr, Class<?> main, String... args) throws IOException {
        List<String> cmd = new ArrayList<>(List.of(Path.of(System.getProperty("java.home"), "bin", "java").toString(),
                "-Xmx256m", "-XX:TieredStopAtLevel=1", "-cp", System.getProperty("java.class.path"), main.getName()));
        cmd.addAll(List.of(args));
        return new ChildJvm(new ProcessBuilder(cmd).redirectError(stderr.toFile()).start(), stderr);
    }

    /**
     * Everything the process prints until it ends; an {@link IllegalStateException} with its
     * standard error when it exits with a status other than 0 or is still running after {@code limit}.
     */
    public String outputUntilExit(java.time.Duration limit) throws IOException, InterruptedException {
        StringBuilder all = new StringBuilder();
        for (String line = out.readLine(); line != null; line = out.readLine()) {
            all.append(line).append('\n');
        }
        if (!process.waitFor(limit.toMillis(), TimeUnit.MILLISECONDS)) {
            throw new IllegalStateException("the child process did not end within " + limit);
        }
        if (process.exitValue() != 0) {
            throw new IllegalStateException("the child process exited with " + process.exitValue() + ":\n" + all
                    + java.nio.file.Files.readString(stderr));
        }
        return all.toString();
    }

    /** The process, to send it SIGTERM ({@code destroy}) or wait for it. */
    public Process process() {
        return process;
    }

    /** Reads output until a line starts with {@code prefix}; returns the rest of it. */
    public String await(String prefix) throws IOException {
        for (String line = out.readLine(); line != null; line = out.readLine()) {
            if (line.startsWith(prefix)) {
                return line.substring(prefix.length()).trim();
            }
        }
        throw new IllegalStateException("the child process ended before printing '" + prefix + "'");
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
