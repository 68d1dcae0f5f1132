package io.switchboard.examples;

import io.switchboard.components.echo.EchoComponent;
import io.switchboard.components.echo.EchoService;
import io.switchboard.components.matrix.MatrixWorkerComponent;
import io.switchboard.components.matrix.MatrixWorkerService;
import io.switchboard.components.simulation.SimulatorComponent;
import io.switchboard.components.simulation.SimulatorService;
import io.switchboard.components.simulation.optimizer.OptimizerComponent;
import io.switchboard.components.simulation.optimizer.OptimizerService;
import io.switchboard.protocol.ServerSettings;
import io.switchboard.protocol.Skeleton;
import io.switchboard.registry.ComponentEntry;
import io.switchboard.server.ComponentServer;
import java.nio.file.Path;
import java.util.Map;
import java.util.concurrent.Callable;
import java.util.concurrent.CountDownLatch;
import java.util.function.Function;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;
import picocli.CommandLine.Parameters;

/** {@code ./switchboard serve COMPONENT}: exports a component, binds it, serves until stopped, then unbinds. */
@Command(name = "serve", mixinStandardHelpOptions = true,
        description = "Export a component on every protocol, bind it in a registry, serve until stopped "
                + "(Ctrl-C or SIGTERM unbinds it first).")
final class ServeCommand implements Callable<Integer> {
    /**
     * The components by the name {@code serve} takes; each is made from the registry's URL, which
     * those that call other components (a matrix worker its neighbours, the optimizer the
     * simulator) use to find them.
     */
    static final Map<String, Function<String, Skeleton>> COMPONENTS = Map.of(
            "echo", registryUrl -> EchoComponent.skeleton(new EchoService()),
            // its shutdown operation stops the process; the shutdown hook below unbinds it first
            "matrix-worker", registryUrl -> MatrixWorkerComponent.skeleton(
                    new MatrixWorkerService(registryUrl, () -> System.exit(0))),
            // it finds the progress callbacks its callers name in the registry
            "simulator", registryUrl -> SimulatorComponent.skeleton(new SimulatorService(registryUrl)),
            "optimizer", registryUrl -> OptimizerComponent.skeleton(new OptimizerService(registryUrl)));

    @Parameters(index = "0", description = "The component: ${COMPLETION-CANDIDATES}.", completionCandidates = Names.class)
    String component;

    @Option(names = "--registry", required = true, description = "The registry's SOAP endpoint, as "
            + "'./switchboard registry' prints it.")
    String registry;

    @Option(names = "--port", defaultValue = "0", description = "SOAP port (default: a free one).")
    int port;

    @Option(names = "--bind", defaultValue = "127.0.0.1", description = "Address to listen on (default ${DEFAULT-VALUE}).")
    String bind;

    @Option(names = "--name", description = "Name to bind under (default: the component's own).")
    String name;

    @Option(names = "--lease", defaultValue = "30", description = "Seconds the registry keeps the entry without a "
            + "heartbeat (default ${DEFAULT-VALUE}; renewed every third of it; 0: until unbound).")
    int leaseSeconds;

    @Option(names = "--secret-file", description = "File holding the registry's shared secret (default: the "
            + Secrets.ENV + " environment variable).")
    Path secretFile;

    static final class Names extends java.util.ArrayList<String> {
        Names() {
            super(new java.util.TreeSet<>(COMPONENTS.keySet()));
        }
    }

    @Override
    public Integer call() throws InterruptedException {
        Function<String, Skeleton> factory = COMPONENTS.get(component);
        if (factory == null) {
            throw new IllegalArgumentException("unknown component '" + component + "' (known: "
                    + new java.util.TreeSet<>(COMPONENTS.keySet()) + ")");
        }
        ComponentServer server = ComponentServer.builder()
                .settings(ServerSettings.defaults().withBindAddress(bind))
                .port("soap", port)
                .registry(registry, Secrets.read(secretFile))
                .lease(java.time.Duration.ofSeconds(leaseSeconds))
                .build();
        ComponentEntry entry;
        try {
            Skeleton skeleton = factory.apply(registry);
            entry = name == null ? server.export(skeleton) : server.export(name, skeleton);
        } catch (RuntimeException e) {
            server.close();
            throw e;
        }
        CountDownLatch stopped = new CountDownLatch(1);
        Runtime.getRuntime().addShutdownHook(new Thread(() -> {
            server.close();
            stopped.countDown();
        }, "serve-shutdown"));
        System.out.println("serving   " + entry.name() + " (instance " + entry.instanceId() + ")");
        entry.endpoints().forEach(e -> System.out.println(String.format("  %-6s  %s", e.protocol(), e.address())));
        System.out.println("bound in  " + registry + (entry.leased() ? " (lease " + entry.leaseSeconds() + " s)" : ""));
        System.out.flush();
        stopped.await();
        return 0;
    }
}
