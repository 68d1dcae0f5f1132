package io.switchboard.cli;

import static org.junit.jupiter.api.Assertions.assertEquals;

import java.io.BufferedReader;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.InputStreamReader;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.util.function.Consumer;
import java.util.function.Supplier;

/**
 * What the command line prints, for tests: a command run in this JVM with one of its streams
 * captured, or a command in a child JVM read until the line a user waits for.
 *
 * <pre>{@code
 * String printed = CommandOutput.stdout(0, "call", "Stats", "sum", "values=1.5 2.5 -0.5", "--registry", url);
 * assertTrue(CommandOutput.stderr(1, "serve", "Nothing", "--registry", url).contains("no component named"));
 * }</pre>
 */
public final class CommandOutput {
    private CommandOutput() {
    }

    /** Runs {@code args} through {@link Main#run}, checks its exit code, returns its standard output. */
    public static String stdout(int expectedExit, String... args) {
        return capture(System::setOut, () -> System.out, expectedExit, args);
    }

    /** Runs {@code args} through {@link Main#run}, checks its exit code, returns its standard error. */
    public static String stderr(int expectedExit, String... args) {
        return capture(System::setErr, () -> System.err, expectedExit, args);
    }

    private static String capture(Consumer<PrintStream> set, Supplier<PrintStream> get, int expectedExit,
                                  String... args) {
        PrintStream original = get.get();
        ByteArrayOutputStream buffer = new ByteArrayOutputStream();
        set.accept(new PrintStream(buffer, true, StandardCharsets.UTF_8));
        try {
            assertEquals(expectedExit, Main.run(args), String.join(" ", args));
        } finally {
            set.accept(original);
        }
        return buffer.toString(StandardCharsets.UTF_8);
    }

    /**
     * Reads a child process's output until a line starts with {@code prefix}; returns the rest of it.
     *
     * @throws IllegalStateException the process ended first
     */
    public static String awaitLine(Process p, String prefix) throws IOException {
        BufferedReader r = new BufferedReader(new InputStreamReader(p.getInputStream(), StandardCharsets.UTF_8));
        for (String line = r.readLine(); line != null; line = r.readLine()) {
            if (line.startsWith(prefix)) {
                return line.substring(prefix.length()).trim();
            }
        }
        throw new IllegalStateException("the process ended before printing '" + prefix + "'");
    }
}
