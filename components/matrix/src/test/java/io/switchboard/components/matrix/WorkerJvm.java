package io.switchboard.components.matrix;

import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.List;
import java.util.concurrent.TimeUnit;

/** A {@link MatrixWorkerMain} in a JVM of its own, on this test's class path (the idea of the registry's ChildJvm). */
final class WorkerJvm implements AutoCloseable {
    private final Process process;
    private final BufferedReader out;

    private WorkerJvm(Process process) {
        this.process = process;
        this.out = new BufferedReader(new InputStreamReader(process.getInputStream(), StandardCharsets.UTF_8));
    }

    static WorkerJvm start(Path stderr, String registryUrl, String name, String secret) throws IOException {
        // a small heap and C1 only: nine of these start side by side on two cores
        List<String> cmd = List.of(Path.of(System.getProperty("java.home"), "bin", "java").toString(),
                "-Xmx192m", "-XX:TieredStopAtLevel=1", "-XX:+UseSerialGC", "-Xshare:auto",
                "-cp", System.getProperty("java.class.path"), MatrixWorkerMain.class.getName(), registryUrl, name, secret);
        return new WorkerJvm(new ProcessBuilder(cmd).redirectError(stderr.toFile()).start());
    }

    /** Waits for the {@code READY} line; afterwards the worker prints nothing more that could fill the pipe. */
    void awaitReady() throws IOException {
        for (String line = out.readLine(); line != null; line = out.readLine()) {
            if (line.startsWith("READY")) {
                return;
            }
        }
        throw new IllegalStateException("the worker process ended before it was ready (exit "
                + (process.isAlive() ? "-" : process.exitValue()) + ")");
    }

    /** Whether the process ended by itself within the time, and its exit code is 0. */
    boolean exitsCleanly(long seconds) throws InterruptedException {
        return process.waitFor(seconds, TimeUnit.SECONDS) && process.exitValue() == 0;
    }

    @Override
    public void close() throws InterruptedException {
        if (process.isAlive()) {
            process.destroyForcibly();
            process.waitFor(30, TimeUnit.SECONDS);
        }
    }
}
