package io.switchboard.cli;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The release archive as a user gets it: {@code switchboard-<version>.tar.gz}, made by this build's
 * package phase, unpacked in a temporary folder outside the checkout and run from there with Java
 * alone: a {@code PATH} holding only {@code java} and the few programs the launcher script uses (no
 * Maven), no {@code JAVA_HOME}, no sources. A registry and {@code serve echo} run as real processes
 * and {@code call} reaches the echo component through them.
 */
class ReleaseArchiveIT {
    private static final String VERSION = System.getProperty("switchboard.test.version");
    /** A JVM start and a server start on a loaded 2-core machine: generous, but never unbounded. */
    private static final Duration STEP = Duration.ofMinutes(2);

    @TempDir
    static Path temp;
    static Path home;
    static Path tools;

    private final List<Process> processes = new ArrayList<>();

    @BeforeAll
    static void unpack() throws Exception {
        Path archive = Path.of(System.getProperty("switchboard.test.releaseArchive"));
        assertTrue(Files.isRegularFile(archive), "the build made " + archive);
        Path checkout = Path.of(System.getProperty("basedir", System.getProperty("user.dir"))).toAbsolutePath().getParent();
        assertFalse(temp.toAbsolutePath().startsWith(checkout), "unpacked outside the checkout: " + temp);
        Path into = Files.createDirectories(temp.resolve("unpacked"));
        Process tar = new ProcessBuilder("tar", "-xzf", archive.toString(), "-C", into.toString())
                .redirectErrorStream(true).start();
        assertTrue(tar.waitFor(STEP.toSeconds(), TimeUnit.SECONDS) && tar.exitValue() == 0, "tar unpacks the archive");
        home = into.resolve("switchboard-" + VERSION);
        tools = Files.createDirectories(temp.resolve("path"));
        Files.createSymbolicLink(tools.resolve("java"), Path.of(System.getProperty("java.home"), "bin", "java"));
        for (String tool : List.of("bash", "dirname", "readlink")) {
            Files.createSymbolicLink(tools.resolve(tool), systemTool(tool));
        }
    }

    private static Path systemTool(String name) {
        return Stream.of("/usr/bin", "/bin").map(d -> Path.of(d, name)).filter(Files::isExecutable).findFirst()
                .orElseThrow(() -> new AssertionError(name + " is not in /usr/bin or /bin"));
    }

    @AfterEach
    void stopLeftovers() {
        processes.forEach(Process::destroyForcibly);
    }

    @Test
    void theArchiveHoldsTheLauncherTheLibrariesTheWheelReadmeAndLicenseAndNoSources() throws IOException {
        assertTrue(Files.isExecutable(home.resolve("bin/switchboard")));
        assertTrue(Files.readString(home.resolve("LICENSE")).contains("Apache License"));
        assertTrue(Files.readString(home.resolve("README.md")).startsWith("# Switchboard"));
        assertTrue(Files.isRegularFile(home.resolve("lib/switchboard-cli-" + VERSION + ".jar")));
        assertTrue(Files.isRegularFile(home.resolve("lib/switchboard-bench-" + VERSION + ".jar")));
        try (Stream<Path> wheels = Files.list(home.resolve("python"))) {
            assertEquals(1, wheels.filter(p -> p.getFileName().toString().matches("switchboard-.*-py3-none-any\\.whl"))
                    .count());
        }
        try (Stream<Path> all = Files.walk(home)) {
            List<String> sources = all.map(p -> p.getFileName().toString())
                    .filter(n -> n.endsWith(".java") || n.equals("pom.xml")).toList();
            assertTrue(sources.isEmpty(), "no sources or build files: " + sources);
        }
    }

    @Test
    void versionRunsWithJavaAloneAndNoMavenOnThePath() throws Exception {
        for (String dir : environment().get("PATH").split(":")) {
            assertFalse(Files.exists(Path.of(dir, "mvn")), "no Maven on the PATH: " + dir);
        }
        Finished version = run("--version");
        assertEquals(0, version.exit(), version.output());
        assertEquals("switchboard " + VERSION, version.output().lines().findFirst().orElse(""));
    }

    @Test
    void theLauncherRunsThroughASymbolicLinkFromAnotherFolder() throws Exception {
        Path link = Files.createSymbolicLink(Files.createDirectories(temp.resolve("links")).resolve("sb"),
                home.resolve("bin/switchboard"));
        Finished version = finish(start(List.of(link.toString(), "--version"), environment()));
        assertEquals(0, version.exit(), version.output());
        assertTrue(version.output().startsWith("switchboard " + VERSION), version.output());
    }

    @Test
    void oneShotCommandsAskForTheJitsFirstTierAloneAndServersForTheJvmsDefaults() throws Exception {
        Path fakeJava = Files.createDirectories(temp.resolve("fake-java-home/bin")).resolve("java");
        Files.writeString(fakeJava, "#!/usr/bin/env bash\necho \"$@\"\n");   // says what the launcher would run
        assertTrue(fakeJava.toFile().setExecutable(true));
        Map<String, String> env = environment();
        env.put("JAVA_HOME", fakeJava.getParent().getParent().toString());
        Finished call = finish(start(List.of(home.resolve("bin/switchboard").toString(), "call"), env));
        assertTrue(call.output().startsWith("-XX:TieredStopAtLevel=1 -cp "), call.output());
        Finished registry = finish(start(List.of(home.resolve("bin/switchboard").toString(), "registry"), env));
        assertTrue(registry.output().startsWith("-cp "), registry.output());
    }

    @Test
    void withoutJavaTheLauncherSaysWhatIsMissing() throws Exception {
        Path noJava = Files.createDirectories(temp.resolve("no-java"));
        for (String tool : List.of("bash", "dirname", "readlink")) {
            if (!Files.exists(noJava.resolve(tool))) {
                Files.createSymbolicLink(noJava.resolve(tool), systemTool(tool));
            }
        }
        Map<String, String> env = environment();
        env.put("PATH", noJava.toString());
        Finished none = finish(start(List.of(home.resolve("bin/switchboard").toString(), "--version"), env));
        assertEquals(1, none.exit());
        assertTrue(none.output().contains("Java 17 or newer is needed"), none.output());
    }

    @Test
    void aRegistryServeEchoAndCallRunFromTheArchive() throws Exception {
        Path secret = Files.writeString(temp.resolve("secret"), "release-test-secret\n");
        Running registry = launch("registry", "--port", "0", "--store", "memory", "--secret-file", secret.toString());
        String url = registry.awaitLine("registry");
        assertTrue(url.startsWith("http://127.0.0.1:") && url.endsWith("/axis2/services/Registry"), url);

        Running server = launch("serve", "echo", "--registry", url, "--secret-file", secret.toString());
        server.awaitLine("serving");

        for (String protocol : List.of("grpc", "soap")) {
            Finished call = run("call", "Echo", "echoDoubles", "values=1.5 -0.0", "--registry", url, "--protocol", protocol);
            assertEquals(0, call.exit(), call.output());
            // the answer on standard output, and the call's record (protocol, bytes, time) on standard error
            assertTrue(call.output().lines().anyMatch("values = [1.5, -0.0]"::equals), call.output());
            // gRPC on the server's host goes over its Unix socket, and the record says so
            String way = protocol.equals("grpc") ? " via unix" : "";
            assertTrue(call.output().lines().anyMatch(l -> l.startsWith("# " + protocol + way + " (pinned")), call.output());
        }
        Finished wrong = run("call", "Echo", "echoDubbles", "--registry", url);
        assertEquals(2, wrong.exit(), "an operation the component does not have: " + wrong.output());

        server.process().destroy();   // SIGTERM: the server unbinds itself on the way out
        assertTrue(server.process().waitFor(STEP.toSeconds(), TimeUnit.SECONDS), "serve stops on SIGTERM");
        Finished gone = run("lookup", "Echo", "--registry", url);
        assertEquals(3, gone.exit(), "the server unbound itself: " + gone.output());
        registry.process().destroy();
        assertTrue(registry.process().waitFor(STEP.toSeconds(), TimeUnit.SECONDS), "registry stops on SIGTERM");
    }

    @Test
    void theWheelInstallsWithPipOffline() throws Exception {
        Path wheel;
        try (Stream<Path> wheels = Files.list(home.resolve("python"))) {
            wheel = wheels.filter(p -> p.toString().endsWith(".whl")).findFirst().orElseThrow();
        }
        Path venv = temp.resolve("venv");
        String python = System.getProperty("switchboard.test.python", "python3");
        assertEquals(0, finish(start(List.of(python, "-m", "venv", venv.toString()), new HashMap<>(System.getenv())))
                .exit(), "python3 -m venv");
        Finished install = finish(start(List.of(venv.resolve("bin/pip").toString(), "install", "--no-deps", "--no-index",
                "--disable-pip-version-check", wheel.toString()), new HashMap<>(System.getenv())));
        assertEquals(0, install.exit(), install.output());
        // installed metadata, read without importing (the dependencies are not installed here)
        Finished metadata = finish(start(List.of(venv.resolve("bin/python").toString(), "-c",
                "import importlib.metadata as m, importlib.util as u; print(m.version('switchboard'));"
                        + " print(' '.join(m.requires('switchboard'))); print(u.find_spec('switchboard').origin)"),
                new HashMap<>(System.getenv())));
        assertEquals(0, metadata.exit(), metadata.output());
        List<String> lines = metadata.output().lines().toList();
        assertEquals("0.1.0", lines.get(0));
        assertTrue(lines.get(1).contains("grpcio>=1.60") && lines.get(1).contains("extra == \"numpy\""), lines.get(1));
        assertTrue(lines.get(2).startsWith(venv.toString()) && lines.get(2).endsWith("switchboard/__init__.py"), lines.get(2));
    }

    /** Java alone: a PATH of java and the launcher's few tools, no JAVA_HOME, no Maven settings. */
    private static Map<String, String> environment() {
        Map<String, String> env = new HashMap<>();
        env.put("PATH", tools.toString());
        env.put("HOME", temp.toString());
        env.put("LANG", "C.UTF-8");
        return env;
    }

    private Finished run(String... args) throws Exception {
        return finish(launchProcess(args));
    }

    private Running launch(String... args) throws IOException {
        Process p = launchProcess(args);
        return new Running(p, new OutputLines(p));
    }

    private Process launchProcess(String... args) throws IOException {
        List<String> command = new ArrayList<>(List.of(home.resolve("bin/switchboard").toString()));
        command.addAll(List.of(args));
        return start(command, environment());
    }

    private Process start(List<String> command, Map<String, String> env) throws IOException {
        ProcessBuilder pb = new ProcessBuilder(command).directory(temp.toFile()).redirectErrorStream(true);
        pb.environment().clear();
        pb.environment().putAll(env);
        Process p = pb.start();
        processes.add(p);
        return p;
    }

    private static Finished finish(Process p) throws Exception {
        OutputLines output = new OutputLines(p);
        assertTrue(p.waitFor(STEP.toSeconds(), TimeUnit.SECONDS), "ended in time: " + p.info().commandLine().orElse(""));
        return new Finished(p.exitValue(), output.all(STEP));
    }

    record Finished(int exit, String output) {
    }

    record Running(Process process, OutputLines output) {
        String awaitLine(String prefix) throws InterruptedException {
            return output.awaitLine(prefix, STEP);
        }
    }
}
