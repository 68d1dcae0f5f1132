package io.switchboard.cli;

import io.switchboard.bench.ChildJvm;
import io.switchboard.protocol.DaemonThreads;
import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;

/**
 * The watchers of {@code registry-bench --watcher-jvms J}: J JVMs of {@link RegistryWatchersMain},
 * W watching clients spread over them, each client watching one of {@code names} names. What they
 * print comes back as {@link Line}s on one queue.
 */
final class WatcherJvms implements AutoCloseable {
    /** Flags of a watcher JVM: small heap and stacks, C1 only (they start many clients, then wait). */
    static List<String> flags(String heap) {
        return List.of("-Xmx" + heap, "-Xss256k", "-XX:TieredStopAtLevel=1", "-XX:+UseSerialGC");
    }

    /**
     * One line a watcher JVM printed: {@code SYNCED n}, {@code TOLD k millis n} or {@code FAILED
     * why}; anything else (the JVM's own notes, say a flight recording's) is {@code OTHER}.
     */
    record Line(String kind, long[] values, String text) {
        static Line parse(String text) {
            String[] f = text.trim().split(" ");
            if (!f[0].equals("SYNCED") && !f[0].equals("TOLD")) {
                return new Line(f[0].equals("FAILED") ? "FAILED" : "OTHER", new long[0], text);
            }
            int fields = f[0].equals("SYNCED") ? 1 : 3;
            if (f.length != fields + 1) {
                return new Line("FAILED", new long[0], "not understood: " + text);
            }
            long[] v = new long[fields];
            try {
                for (int i = 0; i < fields; i++) {
                    v[i] = Long.parseLong(f[i + 1]);
                }
            } catch (NumberFormatException e) {
                return new Line("FAILED", new long[0], "not understood: " + text);
            }
            return new Line(f[0], v, text);
        }
    }

    private final List<Process> processes = new ArrayList<>();
    private final BlockingQueue<Line> lines = new LinkedBlockingQueue<>();

    /** Starts {@code jvms} JVMs watching {@code prefix}0 .. {@code prefix}(names-1) with {@code watchers} clients in all. */
    WatcherJvms(ChildJvm children, Path dir, String url, String prefix, int names, int watchers, int jvms, String heap)
            throws IOException {
        int first = 0;
        for (int j = 0; j < jvms; j++) {
            int count = watchers / jvms + (j < watchers % jvms ? 1 : 0);
            Process p = children.startJava(flags(heap), RegistryWatchersMain.class,
                    dir.resolve("watchers-" + j + ".log"), url, prefix, Integer.toString(names),
                    Integer.toString(first), Integer.toString(count));
            processes.add(p);
            DaemonThreads.start(() -> read(p), "watcher-jvm-" + j);
            first += count;
        }
    }

    private void read(Process p) {
        try (BufferedReader out = new BufferedReader(new InputStreamReader(p.getInputStream(), StandardCharsets.UTF_8))) {
            for (String line = out.readLine(); line != null; line = out.readLine()) {
                Line parsed = Line.parse(line);
                if (!line.isBlank() && !parsed.kind().equals("OTHER")) {
                    lines.add(parsed);
                }
            }
        } catch (IOException e) {
            lines.add(new Line("FAILED", new long[0], "a watcher JVM's output: " + e.getMessage()));
        }
    }

    /** The next line within {@code seconds}; an exception when none came, or a watcher JVM failed. */
    Line next(long seconds, String waitingFor) throws InterruptedException {
        Line l = lines.poll(seconds, TimeUnit.SECONDS);
        if (l == null) {
            throw new IllegalStateException("no word from the watcher JVMs within " + seconds + " s, waiting for "
                    + waitingFor + "; see their logs");
        }
        if (l.kind().equals("FAILED")) {
            throw new IllegalStateException("a watcher JVM: " + l.text());
        }
        return l;
    }

    /** Waits until every JVM has every watch synced; returns the watches reported. */
    long awaitSynced(long seconds) throws InterruptedException {
        long synced = 0;
        for (int j = 0; j < processes.size(); j++) {
            Line l = next(seconds, "snapshots");
            if (!l.kind().equals("SYNCED")) {
                throw new IllegalStateException("a watcher JVM told of a bind before every watch synced: " + l.text());
            }
            synced += l.values()[0];
        }
        return synced;
    }

    /** Ends the watcher JVMs (their input closes) and waits a little for them. */
    @Override
    public void close() throws IOException, InterruptedException {
        for (Process p : processes) {
            p.getOutputStream().close();
        }
        for (Process p : processes) {
            if (!p.waitFor(30, TimeUnit.SECONDS)) {
                p.destroyForcibly();
            }
        }
    }
}
