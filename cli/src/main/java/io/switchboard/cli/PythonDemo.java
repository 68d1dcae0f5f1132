package io.switchboard.cli;

import com.google.gson.JsonParser;
import io.switchboard.bench.ChildJvm;
import io.switchboard.components.echo.EchoComponent;
import io.switchboard.components.echo.EchoStub;
import io.switchboard.metastub.CallRecord;
import io.switchboard.metastub.MetaStub;
import io.switchboard.protocol.CallOptions;
import io.switchboard.client.Switchboard;
import java.io.InputStream;
import java.io.PrintStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;

/**
 * The demo's cross-language stage: the echo component written in Python on the switchboard
 * package ({@code scripts/python/echo_component.py}, a few lines on {@code switchboard.serve})
 * binds itself in the demo's registry and is called from Java over tcp, gRPC and SOAP. When the
 * project's Python venv is missing, the stage makes it first with {@code scripts/python-env.sh}
 * (from PyPI, once; it says so and shows that script's progress lines); {@code --no-python} skips
 * the stage. Anything that goes wrong here (no python3, no network) skips the stage with one line
 * rather than fail the demo.
 */
final class PythonDemo {
    private static final String STAGE = "python echo";
    private final PrintStream out;

    PythonDemo(PrintStream out) {
        this.out = out;
    }

    DemoStageResult run(ChildJvm children, String registryUrl, String secret, Path logDir, boolean skip) {
        out.println("== python: the echo component written in Python, called from Java ==");
        if (skip) {
            return skipped("--no-python");
        }
        Path root = repositoryRoot();
        if (root == null) {
            return skipped("not run from a checkout (scripts/python is missing)");
        }
        Path python = root.resolve("target/python-venv/bin/python");
        if (!Files.isExecutable(python)) {
            String why = makeVenv(root, logDir);
            if (why != null) {
                return skipped(why);
            }
        }
        List<CallRecord> records = new CopyOnWriteArrayList<>();
        Process component = null;
        try {
            for (String file : List.of("echo.xsd", "Echo.proto", "Echo.wsdl")) {
                try (InputStream in = EchoComponent.class.getResourceAsStream(file)) {
                    if (in == null) {
                        return skipped(file + " is not on the class path");
                    }
                    Files.copy(in, logDir.resolve(file), java.nio.file.StandardCopyOption.REPLACE_EXISTING);
                }
            }
            Process started = component = children.start(List.of(python.toString(),
                    root.resolve("scripts/python/echo_component.py").toString(), "--registry", registryUrl, "--name", "PyEcho",
                    "--xsd", logDir.resolve("echo.xsd").toString(), "--proto", logDir.resolve("Echo.proto").toString(),
                    "--wsdl", logDir.resolve("Echo.wsdl").toString()), logDir.resolve("python-echo.log"), Map.of("SWITCHBOARD_SECRET", secret));
            String serving = CompletableFuture.supplyAsync(() -> {
                try {
                    return ChildJvm.awaitLine(started, "{\"event\": \"serving\"", "the Python echo component");
                } catch (java.io.IOException e) {
                    throw new java.io.UncheckedIOException(e);
                }
            }).get(30, TimeUnit.SECONDS);
            out.println("python     PyEcho (pid " + started.pid() + ") serving " + JsonParser.parseString(serving)
                    .getAsJsonObject().get("endpoints"));
            boolean ok = true;
            try (Switchboard sb = Switchboard.builder(registryUrl).listener(records::add).connect()) {
                EchoStub echo = sb.lookup("PyEcho", EchoComponent.DESCRIPTOR, EchoComponent::stub);
                double[] values = {0.0, -0.0, Double.POSITIVE_INFINITY, Double.MIN_VALUE, Double.MAX_VALUE, 1.0 / 3};
                for (String protocol : List.of("tcp", "grpc", "soap")) {
                    EchoStub pinned = echo.withOptions(CallOptions.DEFAULT.with(MetaStub.PROTOCOL, protocol));
                    boolean same = Arrays.equals(values, pinned.echoDoubles(values));
                    boolean list = DemoCommand.sameList(DemoCommand.list(100), pinned.echoList(DemoCommand.list(100)));
                    out.println("           echoDoubles(-0.0, Inf, MIN_VALUE, ...) and echoList(100 nodes) pinned to "
                            + protocol + ": " + (same && list ? "exact" : "WRONG"));
                    ok &= same && list;
                }
            }
            out.println();
            return DemoStageResult.of(STAGE, records, ok, "a Python process");
        } catch (Exception e) {
            return skipped("the Python component did not come up or answer: " + e.getClass().getSimpleName() + ": "
                    + e.getMessage());
        } finally {
            if (component != null) {
                component.destroy();   // SIGTERM: it unbinds itself
            }
        }
    }

    /**
     * Makes the venv with scripts/python-env.sh, saying so once and passing on its progress lines;
     * null when it is ready, else why not.
     */
    private String makeVenv(Path root, Path logDir) {
        out.println("python     making the Python venv once (scripts/python-env.sh: pinned packages from PyPI into "
                + "target/python-venv, about a minute; --no-python skips this stage)");
        try {
            Process p = new ProcessBuilder("bash", root.resolve("scripts/python-env.sh").toString())
                    .redirectOutput(logDir.resolve("python-env.out").toFile()).start();
            try (java.io.BufferedReader progress = new java.io.BufferedReader(new java.io.InputStreamReader(
                    p.getErrorStream(), java.nio.charset.StandardCharsets.UTF_8))) {
                for (String line = progress.readLine(); line != null; line = progress.readLine()) {
                    out.println("           " + line);
                }
            }
            if (!p.waitFor(15, TimeUnit.MINUTES)) {
                p.destroyForcibly();
                return "scripts/python-env.sh did not finish in 15 minutes";
            }
            return p.exitValue() == 0 ? null : "scripts/python-env.sh failed (exit " + p.exitValue() + "; output above)";
        } catch (java.io.IOException e) {
            return "cannot run scripts/python-env.sh: " + e.getMessage();
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            return "interrupted while making the venv";
        }
    }

    private DemoStageResult skipped(String why) {
        out.println("skipped    " + why);
        out.println();
        return DemoStageResult.skipped(STAGE, why);
    }

    /** The checkout this demo runs from (cli/target/classes three levels down), or null if it is not one. */
    private static Path repositoryRoot() {
        try {
            Path classes = Path.of(PythonDemo.class.getProtectionDomain().getCodeSource().getLocation().toURI());
            Path root = classes.getParent().getParent().getParent();
            return Files.isDirectory(root.resolve("scripts/python")) ? root : null;
        } catch (Exception e) {
            return null;
        }
    }
}
