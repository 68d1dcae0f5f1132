package io.switchboard.cli;

import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;

/**
 * A child process's standard output read line by line as it comes, on a thread of its own, so that a
 * test waits for the line it needs with a deadline instead of blocking on a process that hangs.
 *
 * <pre>{@code
 * OutputLines out = new OutputLines(process);
 * String url = out.awaitLine("registry", Duration.ofMinutes(2));
 * }</pre>
 */
public final class OutputLines {
    private static final String END = "\u0000end";
    private final BlockingQueue<String> queue = new LinkedBlockingQueue<>();
    private final List<String> lines = Collections.synchronizedList(new ArrayList<>());
    private final Thread reader;

    public OutputLines(Process process) {
        reader = new Thread(() -> read(process), "child-output");
        reader.setDaemon(true);
        reader.start();
    }

    private void read(Process process) {
        try (BufferedReader r = new BufferedReader(new InputStreamReader(process.getInputStream(), StandardCharsets.UTF_8))) {
            for (String line = r.readLine(); line != null; line = r.readLine()) {
                lines.add(line);
                queue.add(line);
            }
        } catch (IOException e) {
            // the process was stopped: its output ends here
        }
        queue.add(END);
    }

    /** Waits up to {@code limit} for a line starting with {@code prefix}; returns the rest of it, trimmed. */
    public String awaitLine(String prefix, Duration limit) throws InterruptedException {
        long deadline = System.nanoTime() + limit.toNanos();
        while (true) {
            String line = queue.poll(Math.max(0, deadline - System.nanoTime()), TimeUnit.NANOSECONDS);
            if (line == null || END.equals(line)) {
                throw new AssertionError("no line '" + prefix + "' " + (line == null ? "within " + limit : "before the end")
                        + "; output so far: " + lines);
            }
            if (line.startsWith(prefix)) {
                return line.substring(prefix.length()).trim();
            }
        }
    }

    /** Everything read, once the output has ended (waits up to {@code limit} for the end). */
    public String all(Duration limit) throws InterruptedException {
        reader.join(limit.toMillis());
        synchronized (lines) {
            return String.join("\n", lines) + "\n";
        }
    }
}
