package io.switchboard.cli;

import io.switchboard.protocol.ServerSettings;
import io.switchboard.registry.server.RegistryServer;
import io.switchboard.registry.store.RegistryStore;
import io.switchboard.registry.store.RegistryStores;
import java.nio.file.Path;
import java.util.concurrent.Callable;
import java.util.concurrent.CountDownLatch;
import java.util.List;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Option;

/** {@code ./switchboard registry}: a standalone registry that serves until stopped. */
@Command(name = "registry", mixinStandardHelpOptions = true,
        description = "Run a registry over SOAP until stopped (Ctrl-C or SIGTERM).")
final class RegistryCommand implements Callable<Integer> {
    @Option(names = "--port", defaultValue = "" + RegistryServer.DEFAULT_PORT, description = "Port (default ${DEFAULT-VALUE}).")
    int port;

    @Option(names = "--bind", defaultValue = "127.0.0.1",
            description = "Address to listen on: 127.0.0.1 (default) or 0.0.0.0 for all.")
    String bind;

    @Option(names = "--advertise", description = "Host name or address the registry's endpoint publishes, for "
            + "clients on other hosts (default: the bind address; with --bind 0.0.0.0, the first non-loopback address).")
    String advertise;

    @Option(names = "--secret-file", description = "File holding the shared secret that writes must carry "
            + "(default: the " + Secrets.ENV + " environment variable; without either, writes are open).")
    Path secretFile;

    @Option(names = "--store", defaultValue = RegistryStores.DEFAULT, description = "Where entries are kept: "
            + "file:PATH (default ${DEFAULT-VALUE}; entries survive a restart), memory, or "
            + "zookeeper://HOST:PORT[,HOST:PORT...]/ROOT (several registries share one view), or a store a jar on "
            + "the class path adds.")
    String store;

    @Option(names = "--metrics", description = "Serve Prometheus metrics at /metrics on the registry's port (its "
            + "calls, entries, leases, reports, the JVM).")
    boolean metrics;

    @Option(names = "--no-console", description = "Do not serve the read-only console at /console.")
    boolean noConsole;

    @Option(names = "--watch-port", defaultValue = "0", description = "Port of the watch stream, where clients "
            + "follow the registry over gRPC (default: any free port; the registry tells clients where).")
    int watchPort;

    @Option(names = "--no-watch-stream", description = "Serve watches as SOAP long polls only (each holds a "
            + "connection and, while it waits, a thread).")
    boolean noWatchStream;

    @Option(names = "--max-watches", split = ",", paramLabel = "TOTAL[,PER_HOST]", description = "Watch streams held at "
            + "most, in all and per client host (default 20000,4096); one more is refused with the reason.")
    List<Integer> maxWatches;

    @Option(names = "--authz", paramLabel = "FILE", description = "Authorization policy in gRPC's form "
            + "(docs/security.md, \"Authorization\"): who may bind, look up and watch which names. Read again when "
            + "it changes; one that does not parse stops the start.")
    java.nio.file.Path authz;

    @Mixin
    TlsOptions tls = new TlsOptions();

    @Mixin
    TokenOptions.Verifier jwt = new TokenOptions.Verifier();

    @Override
    public Integer call() throws InterruptedException {
        String secret = Secrets.read(secretFile);
        RegistryServer.Builder builder = RegistryServer.builder().port(port).bindAddress(bind).secret(secret)
                .console(!noConsole).watchStream(!noWatchStream).watchPort(watchPort);
        MetricsEndpoint scrape = metrics ? new MetricsEndpoint() : null;
        if (scrape != null) {
            builder.meterRegistry(scrape.registry());
        }
        if (maxWatches != null) {
            builder.maxWatches(maxWatches.get(0), maxWatches.size() > 1 ? maxWatches.get(1) : 4_096);
        }
        if (advertise != null) {
            builder.advertise(advertise);
        }
        if (authz != null) {
            builder.authorization(authz, java.time.Duration.ofSeconds(5));
        }
        builder.tls(tls.serverTls());   // a bad key store stops us before the store opens
        builder.tokenVerifier(jwt.verifier());   // and bad keys
        RegistryStore entries = RegistryStores.open(store);   // a bad store stops us here, naming the file
        RegistryServer server = builder.store(entries).start();   // closes the store if it cannot start
        if (scrape != null) {
            server.mount(MetricsEndpoint.PATH, scrape);
        }
        CountDownLatch stopped = new CountDownLatch(1);
        Runtime.getRuntime().addShutdownHook(new Thread(() -> {
            server.close();
            stopped.countDown();
        }, "registry-shutdown"));
        System.out.println("registry  " + server.endpoint());
        if (advertise == null && ServerSettings.isWildcard(bind)) {
            System.out.println("address   listening on all interfaces; publishing " + java.net.URI.create(server.endpoint())
                    .getHost() + ", the first non-loopback address (--advertise to choose)");
        }
        System.out.println("wsdl      " + server.wsdlUrl());
        if (server.watchStreamAddress() != null) {
            System.out.println("watches   " + server.watchStreamAddress());
        }
        if (server.consoleUrl() != null) {
            System.out.println("console   " + server.consoleUrl());
        }
        if (scrape != null) {
            System.out.println("metrics   " + MetricsEndpoint.besides(server.endpoint()));
        }
        System.out.println("tls       " + tls.describeServer());
        System.out.println("tokens    " + jwt.describe());
        System.out.println("authz     " + (authz == null ? "none (every caller may read; writes as below)"
                : "the policy in " + authz + ", read again when it changes"));
        System.out.println("writes    " + (secret != null ? "need the shared secret" + (authz == null ? "" : " and the policy's consent")
                : authz != null ? "as the policy allows (no shared secret set)" : "open (no shared secret set)"));
        System.out.println("store     " + store + " (" + server.store().list().size() + " entries)");
        System.out.flush();
        stopped.await();
        return 0;
    }
}
