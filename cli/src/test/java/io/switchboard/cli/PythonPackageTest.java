package io.switchboard.cli;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.google.gson.Gson;
import com.google.gson.JsonParser;
import io.switchboard.client.Switchboard;
import io.switchboard.components.echo.EchoComponent;
import io.switchboard.components.echo.EchoService;
import io.switchboard.components.echo.EchoStub;
import io.switchboard.components.matrix.Block;
import io.switchboard.components.matrix.MatrixWorkerComponent;
import io.switchboard.components.matrix.MatrixWorkerService;
import io.switchboard.components.matrix.MatrixWorkerStub;
import io.switchboard.components.simulation.ModelInfo;
import io.switchboard.components.simulation.SimulateFaultException;
import io.switchboard.components.simulation.SimulateWithProgressFaultException;
import io.switchboard.components.simulation.Simulator;
import io.switchboard.components.simulation.SimulatorComponent;
import io.switchboard.components.simulation.SimulatorService;
import io.switchboard.components.simulation.SimulatorStub;
import io.switchboard.components.simulation.SteadyStateFaultException;
import io.switchboard.metastub.MetaStub;
import io.switchboard.protocol.CallOptions;
import io.switchboard.protocol.DrainingException;
import io.switchboard.protocol.ServerCallContext;
import io.switchboard.protocol.ServerSettings;
import io.switchboard.registry.ComponentEntry;
import io.switchboard.registry.server.RegistryServer;
import io.switchboard.server.ComponentServer;
import io.switchboard.server.authz.AuthorizationPolicy;
import io.switchboard.testing.Grpcurl;
import io.switchboard.testing.Prerequisites;
import io.switchboard.testing.PythonPeers;
import io.switchboard.testing.TestCertificates;
import io.switchboard.testing.ThisProcess;
import java.io.InputStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.SplittableRandom;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReference;
import java.util.function.BooleanSupplier;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * The Python package ({@code metastub/python}, import name {@code switchboard}) against the Java
 * side: this JVM serves a registry, the echo component, the matrix worker and the simulator, and
 * runs the package's pytest suite once against them ({@code metastub/python/tests}), in the
 * project's venv with the package's sources on the path, its files shared out to three pytest
 * processes (pytest-xdist, each file's tests in one process, in order): the suite mostly waits on
 * time-outs and pings, and took twice as long in one process. The suite's own tests say what they
 * check (calls knowing only the registry over gRPC and SOAP, bit for bit; numpy arrays; policies
 * and their reasons; the failsafe; a component served with {@code switchboard.serve} called by
 * {@code ./switchboard call}; the package as {@code pip install} puts it in a fresh venv, which
 * {@code scripts/python-package-env.sh} makes before the tests). This test adds what only the
 * Java side can see: the failsafe's call ran once on the Java component, and the matrix worker's
 * and simulator's answers to Python equal those to Java, bit for bit (the Java answers are handed
 * to the suite in a file). pytest's exit code decides: no tests collected (5) fails as any other.
 */
@Timeout(value = 10, unit = TimeUnit.MINUTES)
class PythonPackageTest {
    private static final String SECRET = "python-package-secret";
    private static final Pattern SUMMARY = Pattern.compile("^=*\\s*(\\S.*?) in [0-9.]+s\\b.*$", Pattern.MULTILINE);

    @TempDir
    Path dir;

    @Test
    void thePythonPackagesSuitePassesAgainstTheJavaComponents() throws Exception {
        String python = PythonPeers.python(dir);
        String packagePython = packagePython();
        EchoService echo = new EchoService();
        EchoService failsafeEcho = new EchoService();
        HeldEcho held = new HeldEcho();
        AtomicInteger progressRuns = new AtomicInteger();
        AtomicInteger tcpDownRuns = new AtomicInteger();
        TestCertificates certs = TestCertificates.get();
        try (RegistryServer registry = RegistryServer.builder().secret(SECRET).start();
             // an https:// registry, from which the Python client must never take a plain-text endpoint
             RegistryServer tlsRegistry = RegistryServer.builder().secret(SECRET).tls(certs.server()).start();
             // watches: a registry that only long-polls, and one that holds one stream per client host
             RegistryServer noStream = RegistryServer.builder().secret(SECRET).watchStream(false).start();
             RegistryServer oneStream = RegistryServer.builder().secret(SECRET).maxWatches(16, 1).start();
             // a policy that lets anyone bind, look up and watch the names under PyOnly. and nothing else
             RegistryServer namesOnly = RegistryServer.builder().secret(SECRET).authorization(AuthorizationPolicy.parse("""
                     {"name": "names-only", "allow_rules": [{"name": "py-only", "request": {"paths": [
                       "/switchboard.registry.Registry/bind/PyOnly.*", "/switchboard.registry.Registry/rebind/PyOnly.*",
                       "/switchboard.registry.Registry/unbind/PyOnly.*", "/switchboard.registry.Registry/renew/PyOnly.*",
                       "/switchboard.registry.Registry/lookup/PyOnly.*", "/switchboard.registry.Registry/watch/PyOnly.*"]}}]}
                     """)).start();
             ComponentServer server = ComponentServer.builder().registry(registry.endpoint(), SECRET)
                     .protocols("tcp", "grpc", "soap").build();
             ComponentServer grpcDown = ComponentServer.builder().registry(registry.endpoint(), SECRET)
                     .protocols("grpc", "soap").build();
             ComponentServer tcpDown = ComponentServer.builder().registry(registry.endpoint(), SECRET)
                     .protocols("tcp", "grpc", "soap").build();
             ComponentServer dedup = ComponentServer.builder().registry(registry.endpoint(), SECRET)
                     .protocols("tcp", "grpc", "soap").build();
             ComponentServer tls = ComponentServer.builder().registry(registry.endpoint(), SECRET)
                     .settings(ServerSettings.defaults().withTls(certs.serverMutual())).protocols("tcp", "grpc", "soap").build();
             // only this OS user, whom a call over the server's Unix sockets names: pytest runs as this process does
             ComponentServer uidOnly = ComponentServer.builder().registry(registry.endpoint(), SECRET)
                     .protocols("tcp", "grpc", "soap").authorization(AuthorizationPolicy.of("this-user-only", List.of(),
                             List.of(new AuthorizationPolicy.Rule("this-user", List.of("uid:" + ThisProcess.uid()),
                                     List.of())))).build();
             JavaDrain drain = new JavaDrain(registry.endpoint());
             MatrixWorkerService worker = new MatrixWorkerService(registry.endpoint(), () -> { });
             SimulatorService simulator = new SimulatorService()) {
            server.export(EchoComponent.skeleton(echo));
            server.export(MatrixWorkerComponent.skeleton(worker));
            server.export(SimulatorComponent.skeleton(simulator));
            // the failsafe's component: bound with a gRPC endpoint that no longer listens
            grpcDown.export("EchoGrpcDown", EchoComponent.skeleton(failsafeEcho));
            grpcDown.stopProtocol("grpc");
            dedup.export("SimulatorDedup", SimulatorComponent.skeleton(countingProgress(simulator, progressRuns)));
            dedup.export("EchoHeld", EchoComponent.skeleton(held));   // beside server's Echo: one echo per server
            // tcp's failsafe: bound with a tcp endpoint that no longer listens; simulateWithProgress is not idempotent
            tcpDown.export("SimulatorTcpDown", SimulatorComponent.skeleton(countingProgress(simulator, tcpDownRuns)));
            tcpDown.stopProtocol("tcp");
            // mutual TLS: the suite's client presents the test client key from the same PKCS#12 files as the Java flags
            tls.export("EchoTls", EchoComponent.skeleton(new EchoService()));
            uidOnly.export("EchoUidOnly", EchoComponent.skeleton(new EchoService()));

            Path schemas = Files.createDirectories(dir.resolve("echo"));
            try (InputStream in = EchoComponent.class.getResourceAsStream("echo.xsd")) {
                Files.copy(in, schemas.resolve("echo.xsd"), StandardCopyOption.REPLACE_EXISTING);
            }
            // the documents a Python server reads beside its schema, as a user without Maven makes them
            CommandOutput.stdout(0, "compile", schemas.resolve("echo.xsd").toString());
            // the registry's own .proto, which the watch stream's messages follow
            try (InputStream in = RegistryServer.class.getResourceAsStream("/io/switchboard/registry/wire/Registry.proto")) {
                Files.copy(in, schemas.resolve("Registry.proto"), StandardCopyOption.REPLACE_EXISTING);
            }
            Path javaResults = dir.resolve("java-results.json");
            Files.writeString(javaResults, new Gson().toJson(javaResults(registry.endpoint())));

            Path root = PythonPeers.repositoryRoot();
            Map<String, String> env = new LinkedHashMap<>();
            env.put("PYTHONPATH", root.resolve("metastub/python/src").toString());
            env.put("PYTHONDONTWRITEBYTECODE", "1");
            env.put("SWITCHBOARD_TEST_REGISTRY", registry.endpoint());
            env.put("SWITCHBOARD_TEST_SECRET", SECRET);
            env.put("SWITCHBOARD_TEST_NO_STREAM_REGISTRY", noStream.endpoint());
            env.put("SWITCHBOARD_TEST_ONE_STREAM_REGISTRY", oneStream.endpoint());
            env.put("SWITCHBOARD_TEST_NAMES_ONLY_REGISTRY", namesOnly.endpoint());
            env.put("SWITCHBOARD_TEST_SCHEMAS", schemas.toString());
            env.put("SWITCHBOARD_TEST_JAVA_RESULTS", javaResults.toString());
            Path tlsFiles = Files.createDirectories(dir.resolve("tls"));
            Files.copy(certs.clientKeyStore(), tlsFiles.resolve("client.p12"));
            Files.copy(certs.serverKeyStore(), tlsFiles.resolve("server.p12"));
            Files.copy(certs.trustStore(), tlsFiles.resolve("trust.p12"));
            Files.copy(certs.passwordFile(), tlsFiles.resolve("password"));
            // revocation lists as keytool -gencrl writes them (test_revocation.py): none revoked, the client, the server
            Files.copy(certs.revocationList(dir), tlsFiles.resolve("ca-none.crl"));
            Files.copy(certs.revocationList(dir, certs.clientKeyStore()), tlsFiles.resolve("ca-client.crl"));
            Files.copy(certs.revocationList(dir, certs.serverKeyStore()), tlsFiles.resolve("ca-server.crl"));
            env.put("SWITCHBOARD_TEST_TLS", tlsFiles.toString());
            env.put("SWITCHBOARD_TEST_TLS_REGISTRY", tlsRegistry.endpoint());
            env.put("SWITCHBOARD_TEST_PACKAGE_PYTHON", packagePython);
            env.put("SWITCHBOARD_TEST_WORKDIR", Files.createDirectories(dir.resolve("work")).toString());
            PythonPeers.Result pytest = PythonPeers.run(dir, "pytest", Duration.ofMinutes(8), env, python, "-m", "pytest",
                    "-p", "no:cacheprovider", "-q", "-rfEs", "-n", "3", "--dist", "loadfile",
                    root.resolve("metastub/python/tests").toString());
            String report = pytest.report("pytest");
            assertEquals(0, pytest.exit(), report);
            Matcher summary = SUMMARY.matcher(pytest.out());
            String counts = null;
            while (summary.find()) {
                counts = summary.group(1);   // the last such line is pytest's summary
            }
            assertTrue(counts != null && counts.matches("\\d+ passed"), "every collected test passed, none skipped: "
                    + report);
            System.out.println("pytest: " + counts);

            assertEquals(1, failsafeEcho.calls(), "the call that fell back to SOAP ran once on the component");
            assertEquals(List.of(1, 0L), List.of(drain.onA.entered.get(), drain.onA.calls()),
                    "only the call held on the draining Java replica ran there");
            assertEquals(8, drain.onB.calls(), "the Python clients' eight calls ran on the other replica");
            assertEquals(List.of(4, 4), List.of(held.entered.get(), held.cancelled.get()),
                    "the Python client's cancels of async calls under way over SOAP, gRPC (streamed and unary) and tcp "
                    + "reached them");
            assertEquals(1, progressRuns.get(), "one call id sent over gRPC, tcp and then SOAP ran once on the Java component");
            assertEquals(1, tcpDownRuns.get(), "the non-idempotent call that fell back from tcp to SOAP ran once");
            assertFalse(echo.calls() == 0, "the suite called the Java echo component");

            theCommandLineCallsTheExampleComponent(python, registry.endpoint(), schemas);
        }
    }

    /**
     * {@code scripts/python/echo_component.py}, a few lines on {@code switchboard.serve}: grpcurl lists it
     * by reflection, finds it SERVING and calls it with JSON; it answers {@code ./switchboard call} over
     * gRPC, SOAP and tcp (its Unix socket, on this host) exactly, and unbinds on SIGTERM having run each
     * call once.
     */
    private void theCommandLineCallsTheExampleComponent(String python, String registryUrl, Path schemas)
            throws Exception {
        Process component = PythonPeers.start(dir, "echo-component", Map.of("SWITCHBOARD_SECRET", SECRET), python,
                PythonPeers.script("echo_component.py").toString(), "--registry", registryUrl, "--name", "PyEchoCli",
                "--xsd", schemas.resolve("echo.xsd").toString());
        try {
            String serving = awaitOutput(component, "{\"event\": \"serving\"");
            // grpcurl knows nothing but the address: the service by reflection, its health, a call
            String target = JsonParser.parseString(serving).getAsJsonObject().getAsJsonObject("endpoints").get("grpc")
                    .getAsString().replaceFirst("^grpc://", "").replaceFirst("/.*$", "");
            PythonPeers.Result list = Grpcurl.run(dir, "grpcurl-list", Duration.ofMinutes(1), "-plaintext", target, "list");
            assertEquals(List.of("grpc.health.v1.Health", "grpc.reflection.v1.ServerReflection", "switchboard.echo.Echo"),
                    list.out().lines().sorted().toList(), list.report("grpcurl list"));
            PythonPeers.Result health = Grpcurl.run(dir, "grpcurl-health", Duration.ofMinutes(1), "-plaintext", "-d",
                    "{\"service\": \"switchboard.echo.Echo\"}", target, "grpc.health.v1.Health/Check");
            assertTrue(health.out().contains("\"SERVING\""), health.report("grpcurl health"));
            PythonPeers.Result echoed = Grpcurl.run(dir, "grpcurl-call", Duration.ofMinutes(1), "-plaintext", "-d",
                    "{\"values\": [\"NaN\", -0, \"Infinity\", 1.5]}", target, "switchboard.echo.Echo/echoDoubles");
            assertEquals(List.of("NaN", "-0", "Infinity", "1.5"), JsonParser.parseString(echoed.out()).getAsJsonObject()
                    .getAsJsonArray("values").asList().stream().map(v -> v.getAsString()).toList(),
                    echoed.report("grpcurl echoDoubles"));
            for (String protocol : List.of("grpc", "soap", "tcp")) {
                String[] call = {"call", "PyEchoCli", "echoDoubles", "values=1.5 -0.0 INF", "--protocol", protocol,
                    "--registry", registryUrl};
                assertEquals("values = [1.5, -0.0, Infinity]\n", CommandOutput.stdout(0, call), protocol);
                String record = CommandOutput.stderr(0, call);
                // the Java client takes the Python server's tcp and gRPC sockets: the same host id, a
                // directory only we enter; SOAP has one way
                String via = protocol.equals("soap") ? "" : " via unix";
                assertTrue(record.startsWith("# " + protocol + via + " (pinned on call)"), record);
            }
            component.destroy();   // SIGTERM
            assertTrue(component.waitFor(60, TimeUnit.SECONDS), "the example component did not stop on SIGTERM");
            String out = PythonPeers.out(dir, "echo-component");
            assertEquals(0, component.exitValue(), out + PythonPeers.err(dir, "echo-component"));
            assertTrue(out.contains("\"unbound\": 1") && out.contains("\"grpc echoDoubles\": 3")
                    && out.contains("\"soap echoDoubles\": 2") && out.contains("\"tcp echoDoubles\": 2"),
                    "unbound, each call run once: " + out);
        } finally {
            component.destroyForcibly();
        }
    }

    /** The first line of the example component's output that starts with {@code prefix}, once it is there. */
    private String awaitOutput(Process p, String prefix) throws Exception {
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(60);
        while (true) {
            java.util.Optional<String> line = PythonPeers.out(dir, "echo-component").lines()
                    .filter(l -> l.startsWith(prefix)).findFirst();
            if (line.isPresent()) {
                return line.get();
            }
            if (!p.isAlive() || System.nanoTime() > deadline) {
                throw new AssertionError("the example component did not come up: " + PythonPeers.out(dir, "echo-component")
                        + PythonPeers.err(dir, "echo-component"));
            }
            Thread.sleep(50);
        }
    }

    /** The python of the fresh venv with the package pip-installed, which scripts/test-prerequisites.sh makes. */
    private String packagePython() throws Exception {
        PythonPeers.Result env = PythonPeers.run(dir, "python-package-env", Duration.ofMinutes(1),
                Map.of("PYTHON_ENV_CHECK", "1"), "bash",
                PythonPeers.repositoryRoot().resolve("scripts/python-package-env.sh").toString());
        Prerequisites.require("python", env.exit() == 0 ? null : "the package's venv is not ready: " + env.err().strip());
        return env.out().strip();
    }

    /** The simulator, counting the runs of simulateWithProgress (not idempotent: its call ids are remembered). */
    /**
     * The echo, except that {@code empty()} and {@code echoDoubles([-1])} hold until their caller
     * cancels them (at most 30 s), and {@code echoDoubles([])} answers how many such calls came in and
     * how many of them were cancelled: what the Python suite waits on and checks, since it cannot
     * look into this JVM.
     */
    private static final class HeldEcho extends EchoService {
        final AtomicInteger entered = new AtomicInteger();
        final AtomicInteger cancelled = new AtomicInteger();

        @Override
        public double[] echoDoubles(double[] values) {
            if (values.length == 0) {
                return new double[] {entered.get(), cancelled.get()};
            }
            if (values.length != 1 || values[0] != -1.0) {
                return super.echoDoubles(values);
            }
            hold();
            return values;
        }

        @Override
        public void empty() {
            hold();
        }

        private void hold() {
            java.util.concurrent.CountDownLatch cancel = new java.util.concurrent.CountDownLatch(1);
            try (ServerCallContext.Scope listening = ServerCallContext.current().addCancelListener(cancel::countDown)) {
                entered.incrementAndGet();
                if (cancel.await(30, TimeUnit.SECONDS)) {
                    cancelled.incrementAndGet();
                }
            } catch (InterruptedException e) {
                cancelled.incrementAndGet();   // a cancel interrupts the operation's thread as well
                Thread.currentThread().interrupt();
            }
        }
    }

    /**
     * Two Java replicas of {@code EchoDrain} (A and B, each a {@link HeldEcho}) and
     * {@code EchoDrainControl}, whose {@code empty()} starts A draining: a call of this JVM held on A,
     * then A's {@code close()} on a thread of its own; it returns once A refuses calls as draining.
     * The Python suite's calls that meet A must run on B (test_drain.py); closing this ends the held
     * call, and A's close returns.
     */
    private static final class JavaDrain implements AutoCloseable {
        final HeldEcho onA = new HeldEcho();
        final HeldEcho onB = new HeldEcho();
        private final ComponentServer a;
        private final ComponentServer b;
        private final ComponentServer control;
        private final ComponentEntry entryA;
        private MetaStub toA;
        private CompletableFuture<Void> held;
        private Thread closing;

        JavaDrain(String registryUrl) {
            a = ComponentServer.builder().registry(registryUrl, SECRET).protocols("tcp", "grpc", "soap").build();
            b = ComponentServer.builder().registry(registryUrl, SECRET).protocols("tcp", "grpc", "soap").build();
            control = ComponentServer.builder().registry(registryUrl, SECRET).protocols("grpc", "soap").build();
            entryA = a.export("EchoDrain", EchoComponent.skeleton(onA));
            b.export("EchoDrain", EchoComponent.skeleton(onB));
            control.export("EchoDrainControl", EchoComponent.skeleton(new EchoService() {
                @Override
                public void empty() {
                    // on a thread outside this call, so that the held call is not its child (its deadline, its cancel)
                    AtomicReference<RuntimeException> failed = new AtomicReference<>();
                    Thread starting = new Thread(() -> {
                        try {
                            start();
                        } catch (RuntimeException e) {
                            failed.set(e);
                        }
                    }, "drain-control");
                    starting.start();
                    try {
                        starting.join(60_000);
                    } catch (InterruptedException e) {
                        Thread.currentThread().interrupt();
                        throw new IllegalStateException("interrupted while A started draining", e);
                    }
                    if (failed.get() != null) {
                        throw failed.get();
                    }
                }
            }));
        }

        private synchronized void start() {
            if (closing != null) {
                throw new IllegalStateException("A drains already");
            }
            toA = MetaStub.builder(EchoComponent.DESCRIPTOR).endpoints(entryA.endpoints()).build();
            EchoStub stub = EchoComponent.stub(toA).withOptions(CallOptions.DEFAULT.with(MetaStub.PROTOCOL, "grpc"));
            held = stub.emptyAsync();
            await(() -> onA.entered.get() == 1, "the held call reaches A");
            closing = new Thread(a::close, "closing-A");
            closing.start();
            await(() -> {   // echoDoubles([]) answers HeldEcho's counts and is not counted as a call
                try {
                    stub.echoDoubles(new double[0]);
                    return false;   // the quiet period: still answering
                } catch (DrainingException e) {
                    return true;
                }
            }, "A refuses calls as draining");
        }

        private static void await(BooleanSupplier condition, String what) {
            long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(30);
            while (!condition.getAsBoolean()) {
                if (System.nanoTime() > deadline) {
                    throw new IllegalStateException("not within 30 s: " + what);
                }
                try {
                    Thread.sleep(20);
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                    throw new IllegalStateException("interrupted: " + what, e);
                }
            }
        }

        @Override
        public synchronized void close() throws InterruptedException {
            if (held != null) {
                held.cancel(true);   // the held call ends; A's drain then ends
                closing.join(60_000);
                assertFalse(closing.isAlive(), "A's close did not return once its call under way ended");
            }
            if (toA != null) {
                toA.close();
            }
            control.close();
            b.close();
            a.close();
        }
    }

    private static Simulator countingProgress(SimulatorService simulator, AtomicInteger runs) {
        return new Simulator() {
            @Override
            public double[] simulate(double[] parameters, double[] initial, double[] times)
                    throws SimulateFaultException {
                return simulator.simulate(parameters, initial, times);
            }

            @Override
            public double[] steadyState(double[] parameters, double[] initial) throws SteadyStateFaultException {
                return simulator.steadyState(parameters, initial);
            }

            @Override
            public double[] simulateWithProgress(double[] parameters, double[] initial, double[] times, String progress,
                                                 int reports) throws SimulateWithProgressFaultException {
                runs.incrementAndGet();
                return simulator.simulateWithProgress(parameters, initial, times, progress, reports);
            }

            @Override
            public ModelInfo describe() {
                return simulator.describe();
            }
        };
    }

    /** The matrix worker's and simulator's answers to Java for fixed inputs, doubles as their bits in hex. */
    private static Map<String, Object> javaResults(String registryUrl) {
        Map<String, Object> out = new LinkedHashMap<>();
        SplittableRandom random = new SplittableRandom(42);
        int n = 24;
        Block a = block(n, random);
        Block b = block(n, random);
        double[] parameters = {0.5, 2.0, 1.0, 1.5, 0.3};
        double[] initial = {2, 1, 0, 0};
        double[] times = new double[200];
        for (int i = 0; i < times.length; i++) {
            times[i] = 0.1 * i;
        }
        try (Switchboard sb = Switchboard.connect(registryUrl)) {
            MatrixWorkerStub matrix = sb.lookup(MatrixWorkerComponent.DESCRIPTOR, MatrixWorkerComponent::stub);
            SimulatorStub sim = sb.lookup(SimulatorComponent.DESCRIPTOR, SimulatorComponent::stub);
            for (String protocol : List.of("grpc", "soap")) {
                CallOptions pinned = CallOptions.DEFAULT.with(MetaStub.PROTOCOL, protocol);
                Block c = matrix.withOptions(pinned).multiplyBlock(a, b);
                out.put("multiplyBlock " + protocol, Map.of("rows", c.getRows(), "cols", c.getCols(),
                        "values", hex(c.getValues())));
                out.put("simulate " + protocol, hex(sim.withOptions(pinned).simulate(parameters, initial, times)));
            }
        } catch (Exception e) {
            throw new AssertionError("the Java calls for the reference results failed", e);
        }
        out.put("a", Map.of("rows", a.getRows(), "cols", a.getCols(), "values", hex(a.getValues())));
        out.put("b", Map.of("rows", b.getRows(), "cols", b.getCols(), "values", hex(b.getValues())));
        out.put("parameters", hex(parameters));
        out.put("initial", hex(initial));
        out.put("times", hex(times));
        return out;
    }

    private static Block block(int n, SplittableRandom random) {
        Block b = new Block();
        b.setRows(n);
        b.setCols(n);
        double[] v = new double[n * n];
        for (int i = 0; i < v.length; i++) {
            v[i] = random.nextDouble(-1, 1);
        }
        b.setValues(v);
        return b;
    }

    private static List<String> hex(double[] values) {
        List<String> out = new ArrayList<>(values.length);
        for (double v : values) {
            out.add(String.format("%016x", Double.doubleToRawLongBits(v)));
        }
        return out;
    }
}
