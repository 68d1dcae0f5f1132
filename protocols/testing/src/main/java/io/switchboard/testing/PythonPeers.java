package io.switchboard.testing;

import java.io.File;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * Runs the repository's Python programs ({@code scripts/python/}) as child processes for the
 * cross-language tests: the virtual environment comes from the project's own
 * {@code scripts/python-env.sh} (pinned packages from PyPI, built once under {@code target/} by
 * {@code scripts/test-prerequisites.sh}, which {@code mvn verify} runs before the tests), and every
 * process writes its output to files (no pipe to fill up). A missing venv fails the test; only
 * {@code SWITCHBOARD_TESTS_OFF=python} skips it (see {@link Prerequisites}).
 *
 * <pre>{@code
 * String python = PythonPeers.python(dir);
 * PythonPeers.Result r = PythonPeers.run(dir, "client", Duration.ofMinutes(3), Map.of(),
 *         python, PythonPeers.script("echo_grpc_client.py").toString(), "--proto", proto, "--target", target);
 * }</pre>
 */
public final class PythonPeers {
    private PythonPeers() {
    }

    /** What a finished process printed, and its exit code. */
    public record Result(int exit, String out, String err) {
        public String report(String what) {
            return what + " (exit " + exit + "):\n" + out + err;
        }
    }

    /** One case of a Python program's JSON report (one case per line); protocol is null if it names none. */
    public record Case(String name, String operation, boolean ok, String protocol) {
    }

    private static final Pattern CASE = Pattern.compile("^\\s*\\{\"name\": \"([^\"]+)\", \"operation\": \"([^\"]+)\", "
            + "\"ok\": (true|false)(?:, \"protocol\": \"([^\"]+)\")?");

    /** The cases of a report that {@code echo_grpc_client.py}'s {@code print_report} printed. */
    public static List<Case> cases(String report) {
        List<Case> cases = new ArrayList<>();
        for (String line : report.lines().toList()) {
            Matcher m = CASE.matcher(line);
            if (m.find()) {
                cases.add(new Case(m.group(1), m.group(2), m.group(3).equals("true"), m.group(4)));
            }
        }
        return cases;
    }

    /** What the typed {@code .proto} of a component says at its top (its convention). */
    public static final String TYPED_PROTO_MARK = "Convention (Switchboard typed protobuf";

    /**
     * The python of the project's virtual environment, which {@code scripts/test-prerequisites.sh}
     * builds; fails the test (or skips it, when turned off) if it is missing or stale.
     */
    public static String python(Path dir) throws IOException, InterruptedException {
        Result env = run(dir, "python-env", Duration.ofMinutes(1), Map.of("PYTHON_ENV_CHECK", "1"), "bash",
                repositoryRoot().resolve("scripts/python-env.sh").toString());
        Prerequisites.require("python", env.exit == 0 ? null : "the Python virtual environment is not ready: "
                + env.err.strip());
        List<String> lines = env.out.lines().filter(l -> !l.isBlank()).toList();
        String python = lines.isEmpty() ? "" : lines.get(lines.size() - 1).trim();
        if (!Files.isExecutable(Path.of(python))) {
            throw new AssertionError("python-env.sh printed no python: " + env.out + env.err);
        }
        return python;
    }

    /** A program of {@code scripts/python/}. */
    public static Path script(String name) {
        return repositoryRoot().resolve("scripts/python").resolve(name);
    }

    /** Runs a command to its end within {@code limit}; kills it and fails when it does not end. */
    public static Result run(Path dir, String name, Duration limit, Map<String, String> env, String... command)
            throws IOException, InterruptedException {
        Process p = start(dir, name, env, command);
        try {
            if (!p.waitFor(limit.toMillis(), TimeUnit.MILLISECONDS)) {
                p.destroyForcibly().waitFor(10, TimeUnit.SECONDS);
                throw new AssertionError(String.join(" ", command) + " did not finish in " + limit + ":\n"
                        + out(dir, name) + err(dir, name));
            }
        } finally {
            p.destroyForcibly();
        }
        return new Result(p.exitValue(), out(dir, name), err(dir, name));
    }

    /** Starts a command with its output in {@code dir/NAME.out} and {@code dir/NAME.err}. */
    public static Process start(Path dir, String name, Map<String, String> env, String... command) throws IOException {
        ProcessBuilder pb = new ProcessBuilder(command).redirectOutput(dir.resolve(name + ".out").toFile())
                .redirectError(dir.resolve(name + ".err").toFile())
                .redirectInput(ProcessBuilder.Redirect.from(new File("/dev/null")));
        pb.environment().putAll(env);
        return pb.start();
    }

    /** What the process started as {@code name} has written to its standard output so far. */
    public static String out(Path dir, String name) throws IOException {
        Path f = dir.resolve(name + ".out");
        return Files.exists(f) ? Files.readString(f, StandardCharsets.UTF_8) : "";
    }

    /** What the process started as {@code name} has written to its standard error so far. */
    public static String err(Path dir, String name) throws IOException {
        Path f = dir.resolve(name + ".err");
        return Files.exists(f) ? Files.readString(f, StandardCharsets.UTF_8) : "";
    }

    /** The checkout's root: the first directory upwards that holds scripts/python-env.sh. */
    public static Path repositoryRoot() {
        for (Path p = Path.of("").toAbsolutePath(); p != null; p = p.getParent()) {
            if (Files.isRegularFile(p.resolve("scripts/python-env.sh"))) {
                return p;
            }
        }
        throw new IllegalStateException("no scripts/python-env.sh above " + Path.of("").toAbsolutePath());
    }
}
