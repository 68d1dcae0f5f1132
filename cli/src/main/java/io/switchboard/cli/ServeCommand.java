package io.switchboard.cli;

import io.switchboard.protocol.ClientSettings;
import io.switchboard.protocol.ServerSettings;
import io.switchboard.protocol.Skeleton;
import io.switchboard.registry.ComponentEntry;
import io.switchboard.server.ComponentContext;
import io.switchboard.server.ComponentProvider;
import io.switchboard.server.ComponentProviders;
import io.switchboard.server.ComponentServer;
import java.net.MalformedURLException;
import java.net.URL;
import java.net.URLClassLoader;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.Callable;
import java.util.concurrent.CountDownLatch;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Option;
import picocli.CommandLine.Parameters;

/**
 * {@code ./switchboard serve COMPONENT [--classpath JARS]}: finds the component on the class path
 * (its {@link ComponentProvider}, which the interface compiler generates), exports it, binds it,
 * serves until stopped, then unbinds. The bundled components are found the same way as a team's own.
 *
 * <pre>{@code
 * ./switchboard serve echo --registry http://127.0.0.1:8081/axis2/services/Registry
 * ./switchboard serve Stats --classpath target/stats-1.0-SNAPSHOT.jar --registry http://127.0.0.1:8081/axis2/services/Registry
 * }</pre>
 */
@Command(name = "serve", mixinStandardHelpOptions = true,
        description = "Export a component found on the class path on every protocol, bind it in a registry, serve "
                + "until stopped (Ctrl-C or SIGTERM drains it: unbinds it, answers for a quiet period, refuses new "
                + "calls as draining and waits for those under way).")
final class ServeCommand implements Callable<Integer> {
    @Parameters(index = "0", paramLabel = "COMPONENT", description = "The component's name, without regard to case, "
            + "hyphens or underscores: a bundled one (echo, matrix-worker, simulator, optimizer) or one in --classpath. "
            + "An unknown name lists those found.")
    String component;

    @Option(names = "--classpath", paramLabel = "JARS", split = "${sys:path.separator}", description = "Jars or class "
            + "directories to find the component in, separated by '${sys:path.separator}' (repeatable). Name the "
            + "component's own dependencies too; Switchboard's runtime and protocols are here already.")
    List<Path> classpath = new ArrayList<>();

    @Option(names = "--registry", required = true, description = "The registry's SOAP endpoint, as "
            + "'./switchboard registry' prints it.")
    String registry;

    @Option(names = "--port", defaultValue = "0", description = "SOAP port (default: a free one).")
    int port;

    @Option(names = "--bind", defaultValue = "127.0.0.1", description = "Address to listen on (default ${DEFAULT-VALUE}).")
    String bind;

    @Option(names = "--advertise", description = "Host name or address the component's endpoints publish, for "
            + "callers on other hosts (default: the bind address; with --bind 0.0.0.0, the first non-loopback address).")
    String advertise;

    @Option(names = "--name", description = "Name to bind under (default: the component's own).")
    String name;

    @Option(names = "--lease", defaultValue = "30", description = "Seconds the registry keeps the entry without a "
            + "heartbeat (default ${DEFAULT-VALUE}; renewed every third of it; 0: until unbound).")
    int leaseSeconds;

    @Option(names = "--secret-file", description = "File holding the registry's shared secret (default: the "
            + Secrets.ENV + " environment variable).")
    Path secretFile;

    @Option(names = "--metrics", description = "Serve Prometheus metrics at /metrics on the SOAP port: calls per "
            + "operation, protocol and outcome with latency percentiles, refusals, the JVM.")
    boolean metrics;

    @Option(names = "--drain-quiet", paramLabel = "MS", defaultValue = "1000", description = "On SIGTERM or Ctrl-C, "
            + "how long the server goes on answering after it unbinds its entry, while clients move away (default "
            + "${DEFAULT-VALUE} ms); then it refuses new calls as draining.")
    long drainQuietMillis;

    @Option(names = "--drain-timeout", paramLabel = "S", defaultValue = "30", description = "On SIGTERM or Ctrl-C, "
            + "how long the server waits for the calls under way before it stops (default ${DEFAULT-VALUE} s).")
    long drainTimeoutSeconds;

    @Option(names = "--call-log", paramLabel = "FILE", description = "Append a line to FILE ('-': standard output) "
            + "for every call the component runs, when it ends: time, component, operation, protocol, outcome, ms, "
            + "call id. Repeats answered from memory and calls refused as draining did not run and are not written.")
    String callLog;

    @Option(names = "--authz", paramLabel = "FILE", description = "Authorization policy in gRPC's form "
            + "(docs/security.md, \"Authorization\"): who may call which operation; a call it denies does not run. "
            + "Read again when it changes; one that does not parse stops the start.")
    java.nio.file.Path authz;

    @Mixin
    TlsOptions tls = new TlsOptions();

    @Mixin
    TokenOptions.Caller token = new TokenOptions.Caller();

    @Mixin
    TokenOptions.Verifier jwt = new TokenOptions.Verifier();

    @Override
    public Integer call() throws InterruptedException {
        Thread thread = Thread.currentThread();
        ClassLoader previous = thread.getContextClassLoader();
        // before anything is looked up: providers of every kind (components, protocols, codecs) come
        // through the context class loader, and threads the server starts inherit it
        URLClassLoader extra = classpath.isEmpty() ? null : loader(classpath);
        if (extra != null) {
            thread.setContextClassLoader(extra);
        }
        try {
            return serve();
        } finally {
            thread.setContextClassLoader(previous);
        }
    }

    private static URLClassLoader loader(List<Path> entries) {
        List<URL> urls = new ArrayList<>();
        for (Path entry : entries) {
            if (!Files.exists(entry)) {
                throw new IllegalArgumentException("--classpath: no such file or directory: " + entry);
            }
            try {
                urls.add(entry.toAbsolutePath().toUri().toURL());
            } catch (MalformedURLException e) {
                throw new IllegalArgumentException("--classpath: not a usable path: " + entry, e);
            }
        }
        return new URLClassLoader("serve-classpath", urls.toArray(URL[]::new), ServeCommand.class.getClassLoader());
    }

    private int serve() throws InterruptedException {
        ComponentProvider provider = ComponentProviders.find(component);
        String secret = Secrets.read(secretFile);
        CountDownLatch stopped = new CountDownLatch(1);
        // TLS on every listener, and the same key and trust toward the registry
        ServerSettings settings = jwt.server(tls.server(ServerSettings.defaults().withBindAddress(bind)));
        java.util.function.Supplier<String> ownToken = token.token();   // toward the registry and other components
        MetricsEndpoint scrape = metrics ? new MetricsEndpoint() : null;
        ComponentServer.Builder builder = ComponentServer.builder()
                .settings(advertise == null ? settings : settings.withAdvertisedHost(advertise))
                .port("soap", port)
                .registry(registry, secret)
                .registryToken(ownToken)
                .lease(java.time.Duration.ofSeconds(leaseSeconds))
                .drain(java.time.Duration.ofMillis(drainQuietMillis), java.time.Duration.ofSeconds(drainTimeoutSeconds));
        if (scrape != null) {
            builder.meterRegistry(scrape.registry());
        }
        if (authz != null) {
            builder.authorization(authz, java.time.Duration.ofSeconds(5));
        }
        CallLog log = callLog == null ? null : CallLog.open(callLog);
        if (log != null) {
            builder.interceptor(log);
        }
        ComponentServer server = builder.build();
        ComponentEntry entry;
        try {
            // a component that stops its host (a matrix worker's shutdown) ends this command; the exit
            // that follows runs the shutdown hook below, which unbinds it first
            // named: the component's calls to components in this process carry its name as their caller
            Skeleton skeleton = provider.create(ComponentContext.of(registry, secret, stopped::countDown,
                    ClientSettings.defaults().withTls(settings.tls()).withToken(ownToken))
                    .named(name != null ? name : provider.name()));
            entry = name == null ? server.export(skeleton) : server.export(name, skeleton);
            if (scrape != null) {
                server.mount(MetricsEndpoint.PATH, scrape);
            }
        } catch (RuntimeException e) {
            server.close();
            if (log != null) {
                log.close();
            }
            throw e;
        }
        Runtime.getRuntime().addShutdownHook(new Thread(() -> {
            stop(server, entry, log);
            stopped.countDown();
        }, "serve-shutdown"));
        System.out.println("serving   " + entry.name() + " (instance " + entry.instanceId() + ")");
        entry.endpoints().forEach(e -> System.out.println(String.format("  %-6s  %s", e.protocol(), e.address())));
        if (scrape != null) {
            System.out.println("metrics   " + MetricsEndpoint.besides(entry.endpoint("soap").orElseThrow().address()));
        }
        System.out.println("bound in  " + registry + (entry.leased() ? " (lease " + entry.leaseSeconds() + " s)" : ""));
        System.out.flush();
        stopped.await();
        stop(server, entry, log);
        return 0;
    }

    /** Drains and closes (once: the shutdown hook, or a component that stopped its host), and says how it went. */
    private static void stop(ComponentServer server, ComponentEntry entry, CallLog log) {
        ComponentServer.Drained drained = server.drainAndClose();
        if (drained != null) {
            System.out.println("stopped   " + entry.name() + " (instance " + entry.instanceId() + "): unbound, " + drained);
            System.out.flush();
            if (log != null) {
                log.close();
            }
        }
    }
}
