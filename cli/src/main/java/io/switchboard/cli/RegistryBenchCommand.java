package io.switchboard.cli;

import io.switchboard.bench.ChildJvm;
import io.switchboard.components.echo.EchoComponent;
import io.switchboard.protocol.Endpoint;
import io.switchboard.registry.ComponentEntry;
import io.switchboard.registry.RegistryClient;
import io.switchboard.registry.RegistryEvent;
import io.switchboard.registry.RegistryWatch;
import java.io.IOException;
import java.io.InputStream;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Locale;
import java.util.concurrent.Callable;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicLongArray;
import org.apache.zookeeper.server.ZooKeeperServerMain;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;

/**
 * {@code ./switchboard registry-bench}: one registry server (its own JVM, as {@code ./switchboard
 * registry} runs it) under N instances and W watching clients, for each store asked for. Measures
 * binds/s, {@code list} of every entry, lookups/s, the time from a bind to the last watcher told,
 * a lease renewal while they watch, and the registry's heap; prints one Markdown table row per
 * store.
 *
 * <pre>{@code
 * ./switchboard registry-bench --stores file,zookeeper --instances 10000 --watchers 2000
 * ./switchboard registry-bench --stores memory --instances 500 --watchers 100 --lookup-seconds 2   # a smoke run
 * }</pre>
 */
@Command(name = "registry-bench", mixinStandardHelpOptions = true, sortOptions = false,
        description = {"The registry at scale: one registry JVM with N instances and W watchers, per store.",
            "Prints a Markdown table: binds/s, list ms, lookups/s, bind -> last watcher told p50/p99, renewal ms, heap."})
final class RegistryBenchCommand implements Callable<Integer> {
    @Option(names = "--stores", split = ",", defaultValue = "file,zookeeper",
            description = "Stores to run: memory, file, zookeeper (default ${DEFAULT-VALUE}).")
    List<String> stores;

    @Option(names = "--instances", defaultValue = "10000", description = "Instances bound (default ${DEFAULT-VALUE}), "
            + "ten per name.")
    int instances;

    @Option(names = "--watchers", defaultValue = "1000", description = "Watches opened (default ${DEFAULT-VALUE}).")
    int watchers;

    @Option(names = "--watch-clients", defaultValue = "50", description = "Registry clients the watches are spread "
            + "over (default ${DEFAULT-VALUE}); every watch of this JVM shares one connection to the watch stream.")
    int watchClients;

    @Option(names = "--every-name", defaultValue = "10", description = "One watch in this many follows every name, "
            + "as a Switchboard's own watch does; the others follow one name (default ${DEFAULT-VALUE}).")
    int everyName;

    @Option(names = "--watcher-jvms", defaultValue = "0", description = "Run the watchers in this many JVMs of their "
            + "own, each watcher a Switchboard client of its own watching one of --watched-names names, as separate "
            + "processes would (default ${DEFAULT-VALUE}: watches in this JVM over --watch-clients clients).")
    int watcherJvms;

    @Option(names = "--watched-names", defaultValue = "100", description = "With --watcher-jvms: the names watched; "
            + "each timed bind goes to the next (default ${DEFAULT-VALUE}).")
    int watchedNames;

    @Option(names = "--watcher-heap", defaultValue = "256m", description = "With --watcher-jvms: each watcher JVM's "
            + "-Xmx (default ${DEFAULT-VALUE}).")
    String watcherHeap;

    @Option(names = "--binds-told", defaultValue = "20", description = "Binds timed until every watcher is told "
            + "(default ${DEFAULT-VALUE}).")
    int bindsTold;

    @Option(names = "--bind-threads", defaultValue = "8", description = "Threads binding (default ${DEFAULT-VALUE}).")
    int bindThreads;

    @Option(names = "--lookup-threads", defaultValue = "8", description = "Threads looking up (default ${DEFAULT-VALUE}).")
    int lookupThreads;

    @Option(names = "--lookup-seconds", defaultValue = "10", description = "How long lookups run (default ${DEFAULT-VALUE}).")
    int lookupSeconds;

    @Option(names = "--settle-seconds", defaultValue = "30", description = "Before lookups are timed, untimed "
            + "lookups until the JIT compilers of the bench's and the registry's JVMs are quiet, at most this long "
            + "(default ${DEFAULT-VALUE}; 0: two seconds of untimed lookups).")
    int settleSeconds;

    @Option(names = "--registry-heap", defaultValue = "1g", description = "The registry JVM's -Xmx (default ${DEFAULT-VALUE}).")
    String registryHeap;

    @Option(names = "--zookeeper", description = "HOST:PORT of a ZooKeeper to use (default: one started in a JVM of its own).")
    String zookeeper;

    @Option(names = "--out", description = "Also write the table to this Markdown file.")
    Path out;

    private static final String WATCHED = "BenchWatched";

    /** One store's figures. */
    record Row(String store, int instances, int watchers, double bindsPerSecond, double listMillis,
               double lookupsPerSecond, double toldP50, double toldP99, double renewMillis, double heapMb,
               double liveMb, long streams, long shed, int watcherJvms, double watchedBindsPerSecond,
               int soapOpen) {
        String markdown() {
            return String.format(Locale.ROOT, "| %s | %,d | %,d | %s | %,.0f | %,.0f | %,.0f | %s | %s | %,.0f "
                            + "| %,.0f / %,.0f | %,d | %,d | %,d |",
                    store, instances, watchers, watcherJvms == 0 ? "-" : Integer.toString(watcherJvms), bindsPerSecond,
                    listMillis, lookupsPerSecond,
                    watchers == 0 ? "-" : String.format(Locale.ROOT, "%,.0f / %,.0f", toldP50, toldP99),
                    watchedBindsPerSecond == 0 ? "-" : String.format(Locale.ROOT, "%,.0f", watchedBindsPerSecond), renewMillis, heapMb, liveMb,
                    streams, soapOpen, shed);
        }
    }

    static final String HEADER = "| store | instances | watchers | watcher JVMs | binds/s | list ms | lookups/s | bind → "
            + "last watcher told p50 / p99 ms | binds/s (watched) | renewal ms (watched) | registry heap used / live MB "
            + "| watch streams | SOAP connections open (watching) | SOAP connections shed |\n"
            + "| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |";

    @Override
    public Integer call() throws Exception {
        if (settleSeconds < 0) {
            throw new IllegalArgumentException("--settle-seconds must be 0 or more, not " + settleSeconds);
        }
        ScratchDirectory scratch = ScratchDirectory.create("registry-bench");
        Path dir = scratch.path();
        String secret = Secrets.read(null);
        List<Row> rows = new ArrayList<>();
        List<String> notes = new ArrayList<>();
        try (ChildJvm children = new ChildJvm()) {
            String zk = zookeeper;
            if (zk == null && stores.contains("zookeeper")) {
                zk = startZooKeeper(children, dir);
            }
            for (String store : stores) {
                String spec = switch (store) {
                    case "memory" -> "memory";
                    case "file" -> "file:" + dir.resolve("registry-" + rows.size() + ".json");
                    case "zookeeper" -> "zookeeper://" + zk + "/bench-" + System.nanoTime();
                    default -> throw new IllegalArgumentException("not a store: " + store + " (memory, file, zookeeper)");
                };
                Process registry = children.startJava(List.of("-Xmx" + registryHeap, "-XX:+UseG1GC"), Main.class,
                        dir.resolve("registry-" + store + ".log"), "registry", "--port", "0", "--store", spec,
                        "--metrics", "--no-console",
                        // every watcher here comes from one host; spread over hosts, none would reach a host's share
                        "--max-watches", Math.max(20_000, watchers + 1_000) + "," + Math.max(4_096, watchers + 1_000));
                String url = ChildJvm.awaitLine(registry, "registry", "the registry").substring("registry".length()).trim();
                Row row = run(store, url, secret, children, dir, registry.pid(), notes);
                rows.add(row);
                System.out.println(HEADER);
                System.out.println(row.markdown());
                registry.destroy();
                registry.waitFor(15, TimeUnit.SECONDS);
            }
        } catch (Exception | Error e) {
            scratch.keep();
            System.err.println("the registry's and the watchers' logs are kept in " + dir);
            throw e;
        } finally {
            scratch.close();   // the child JVMs have ended: ChildJvm closed first
        }
        String table = HEADER + "\n" + String.join("\n", rows.stream().map(Row::markdown).toList()) + "\n"
                + (notes.isEmpty() ? "" : "\n" + String.join("\n", notes.stream().map(n -> "- " + n).toList()) + "\n");
        System.out.println();
        System.out.print(table);
        if (out != null) {
            Files.writeString(out, table);
        }
        return 0;
    }

    private static String startZooKeeper(ChildJvm children, Path dir) throws IOException, InterruptedException {
        int port;
        try (java.net.ServerSocket s = new java.net.ServerSocket(0)) {
            port = s.getLocalPort();
        }
        Path data = Files.createDirectories(dir.resolve("zookeeper"));
        children.startJava(List.of("-Xmx256m", "-Dzookeeper.admin.enableServer=false"), ZooKeeperServerMain.class,
                dir.resolve("zookeeper.log"), Integer.toString(port), data.toString());
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(30);
        while (System.nanoTime() < deadline) {
            try (java.net.Socket s = new java.net.Socket("127.0.0.1", port)) {
                return "127.0.0.1:" + port;
            } catch (IOException notYet) {
                Thread.sleep(100);   // until ZooKeeper listens
            }
        }
        throw new IOException("ZooKeeper did not start within 30 s; see " + dir.resolve("zookeeper.log"));
    }

    private Row run(String store, String url, String secret, ChildJvm children, Path dir, long registryPid,
                    List<String> notes) throws Exception {
        int names = Math.max(1, instances / 10);
        String schema = EchoComponent.DESCRIPTOR.schema();
        try (RegistryClient writer = RegistryClient.connect(url, secret)) {
            // binds, from several threads
            ExecutorService pool = Executors.newFixedThreadPool(Math.max(bindThreads, lookupThreads));
            long start = System.nanoTime();
            List<Future<?>> done = new ArrayList<>();
            for (int t = 0; t < bindThreads; t++) {
                int first = t;
                done.add(pool.submit(() -> {
                    for (int i = first; i < instances; i += bindThreads) {
                        writer.bind(entry("Bench" + (i % names), "i" + i, schema, 0));
                    }
                    return null;
                }));
            }
            for (Future<?> f : done) {
                f.get();
            }
            double bindsPerSecond = instances / seconds(start);

            // list of every entry: the median of five, after ten untimed (the listener's connection,
            // the JIT's first work on both sides, some ten lists of 10,000: the figure is the
            // registry's steady state)
            for (int i = 0; i < 10; i++) {
                writer.list();
            }
            double[] lists = new double[5];
            for (int i = 0; i < lists.length; i++) {
                long t0 = System.nanoTime();
                int n = writer.list().size();
                lists[i] = (System.nanoTime() - t0) / 1e6;
                if (n < instances) {
                    throw new IllegalStateException("list returned " + n + " entries of " + instances);
                }
            }
            Arrays.sort(lists);

            // lookups of random names from several threads, timed after untimed ones (2 s, then more
            // until both JVMs' JIT compilers are quiet): the registry's steady state, not the JIT's work
            lookupsFor(pool, writer, names, Math.min(2, lookupSeconds));
            if (settleSeconds > 0 && !io.switchboard.bench.JitSettling.untilQuiet(() -> {
                try {
                    lookupsFor(pool, writer, names, 1);
                } catch (Exception e) {
                    throw new IllegalStateException(e);
                }
            }, Duration.ofSeconds(settleSeconds), List.of(registryPid))) {
                notes.add(store + ": lookups timed with the JIT compilers still busy after " + settleSeconds
                        + " s of untimed lookups");
            }
            long lookupStart = System.nanoTime();
            double lookupsPerSecond = lookupsFor(pool, writer, names, lookupSeconds) / seconds(lookupStart);
            pool.shutdown();

            Watched watched = watcherJvms > 0 ? watchFromJvms(children, dir, url, writer, schema)
                    : watch(url, writer, schema);
            try {
                int soapOpen = SoapConnections.establishedTo(java.net.URI.create(url).getPort());
                double heap = metric(url, "jvm_memory_used_bytes{area=\"heap\"") / 1e6;
                double live = metric(url, "jvm_gc_live_data_size_bytes") / 1e6;
                long streams = (long) metric(url, "switchboard_registry_watch_streams");
                long shed = (long) metric(url, "switchboard_registry_connections_shed_total");
                return new Row(store, instances, watchers, bindsPerSecond, lists[lists.length / 2], lookupsPerSecond,
                        watched.p50, watched.p99, watched.renewMillis, heap, live, streams, shed, watcherJvms,
                        watched.bindsPerSecond, soapOpen);
            } finally {
                watched.close();
            }
        }
    }

    /** How many lookups of random names {@link #lookupThreads} threads made in {@code seconds}. */
    private long lookupsFor(ExecutorService pool, RegistryClient writer, int names, int seconds) throws Exception {
        AtomicLong lookups = new AtomicLong();
        long end = System.nanoTime() + TimeUnit.SECONDS.toNanos(seconds);
        List<Future<?>> done = new ArrayList<>();
        for (int t = 0; t < lookupThreads; t++) {
            done.add(pool.submit(() -> {
                while (System.nanoTime() < end) {
                    writer.lookup("Bench" + ThreadLocalRandom.current().nextInt(names));
                    lookups.incrementAndGet();
                }
                return null;
            }));
        }
        for (Future<?> f : done) {
            f.get();
        }
        return lookups.get();
    }

    /** The watchers, open, and what their binds took. */
    private record Watched(List<RegistryClient> clients, List<RegistryWatch> watches, double p50, double p99,
                           double renewMillis, double bindsPerSecond, AutoCloseable jvms) implements AutoCloseable {
        @Override
        public void close() throws Exception {
            watches.forEach(RegistryWatch::close);
            clients.forEach(RegistryClient::close);
            if (jvms != null) {
                jvms.close();
            }
        }
    }

    /**
     * The watchers in JVMs of their own; {@code binds-told} binds, one after another without
     * waiting, bind K under the K-th name: each timed from its start (wall clock) to the last
     * watcher of its name told.
     */
    private Watched watchFromJvms(ChildJvm children, Path dir, String url, RegistryClient writer, String schema)
            throws Exception {
        String prefix = "BenchW";
        WatcherJvms jvms = new WatcherJvms(children, dir, url, prefix, watchedNames, watchers, watcherJvms, watcherHeap);
        try {
            long synced = jvms.awaitSynced(600);
            if (synced != watchers) {
                throw new IllegalStateException(synced + " watches synced of " + watchers);
            }
            writer.bind(entry(prefix + "0", "leased", schema, 60));
            long renewStart = System.nanoTime();
            writer.renew(prefix + "0", "leased", Duration.ofSeconds(10));
            double renewMillis = (System.nanoTime() - renewStart) / 1e6;
            int[] expected = new int[bindsTold];
            long[] boundAt = new long[bindsTold];
            long start = System.nanoTime();
            for (int k = 0; k < bindsTold; k++) {
                int name = k % watchedNames;
                expected[k] = watchers / watchedNames + (name < watchers % watchedNames ? 1 : 0);
                boundAt[k] = System.currentTimeMillis();
                writer.bind(entry(prefix + name, "w" + k, schema, 0));
            }
            double bindsPerSecond = bindsTold / seconds(start);
            int[] told = new int[bindsTold];
            long[] last = new long[bindsTold];
            int pending = (int) java.util.stream.IntStream.of(expected).filter(e -> e > 0).count();
            while (pending > 0) {
                WatcherJvms.Line l = jvms.next(120, pending + " binds to be told to every watcher");
                int k = (int) l.values()[0];
                last[k] = Math.max(last[k], l.values()[1]);
                told[k] += (int) l.values()[2];
                if (told[k] == expected[k]) {
                    pending--;
                }
            }
            double[] millis = new double[bindsTold];
            for (int k = 0; k < bindsTold; k++) {
                millis[k] = expected[k] == 0 ? 0 : last[k] - boundAt[k];
            }
            Arrays.sort(millis);
            return new Watched(List.of(), List.of(), percentile(millis, 0.50), percentile(millis, 0.99), renewMillis,
                    bindsPerSecond, jvms);
        } catch (Exception e) {
            jvms.close();
            throw e;
        }
    }

    private Watched watch(String url, RegistryClient writer, String schema) throws Exception {
        List<RegistryClient> clients = new ArrayList<>();
        List<RegistryWatch> watches = new ArrayList<>();
        CountDownLatch[] told = new CountDownLatch[bindsTold];
        AtomicLongArray lastTold = new AtomicLongArray(bindsTold);
        for (int k = 0; k < bindsTold; k++) {
            told[k] = new CountDownLatch(watchers);
        }
        for (int c = 0; c < Math.max(1, Math.min(watchClients, watchers)); c++) {
            clients.add(RegistryClient.connect(url));
        }
        for (int i = 0; i < watchers; i++) {
            List<String> names = everyName > 0 && i % everyName == 0 ? List.of() : List.of(WATCHED);
            watches.add(RegistryWatch.start(clients.get(i % clients.size()), names, e -> {
                if (e.kind() == RegistryEvent.Kind.APPEAR && e.name().equals(WATCHED) && e.instanceId().startsWith("w")) {
                    int k = Integer.parseInt(e.instanceId().substring(1));
                    lastTold.accumulateAndGet(k, System.nanoTime(), Math::max);
                    told[k].countDown();
                }
            }));
        }
        for (RegistryWatch w : watches) {
            if (!w.awaitSynced(Duration.ofSeconds(120))) {
                throw new IllegalStateException("a watcher did not sync within 120 s");
            }
        }
        writer.bind(entry(WATCHED, "leased", schema, 60));
        long renewStart = System.nanoTime();
        writer.renew(WATCHED, "leased", Duration.ofSeconds(10));
        double renewMillis = (System.nanoTime() - renewStart) / 1e6;
        double[] millis = new double[bindsTold];
        for (int k = 0; k < bindsTold; k++) {
            long t0 = System.nanoTime();
            writer.bind(entry(WATCHED, "w" + k, schema, 0));
            if (!told[k].await(120, TimeUnit.SECONDS)) {
                throw new IllegalStateException(told[k].getCount() + " watchers were not told of a bind within 120 s");
            }
            millis[k] = (lastTold.get(k) - t0) / 1e6;
        }
        Arrays.sort(millis);
        return new Watched(clients, watches, percentile(millis, 0.50), percentile(millis, 0.99), renewMillis, 0, null);
    }

    private static double percentile(double[] sorted, double p) {
        return sorted[Math.min(sorted.length - 1, (int) Math.ceil(p * sorted.length) - 1)];
    }

    private static double seconds(long since) {
        return (System.nanoTime() - since) / 1e9;
    }

    private static ComponentEntry entry(String name, String instance, String schema, int lease) {
        return new ComponentEntry(name, instance, List.of(new Endpoint("soap", "http://127.0.0.1:9/axis2/services/" + name)),
                schema, null, null, null, List.of(), lease);
    }

    /** The sum of the series whose line starts with {@code prefix} on the registry's /metrics. */
    private static double metric(String registryUrl, String prefix) throws IOException, InterruptedException {
        HttpResponse<InputStream> r = HttpClient.newHttpClient().send(HttpRequest.newBuilder(
                URI.create(MetricsEndpoint.besides(registryUrl))).build(), HttpResponse.BodyHandlers.ofInputStream());
        double sum = 0;
        try (var lines = new java.io.BufferedReader(new java.io.InputStreamReader(r.body(),
                java.nio.charset.StandardCharsets.UTF_8))) {
            for (String line = lines.readLine(); line != null; line = lines.readLine()) {
                if (line.startsWith(prefix)) {
                    sum += Double.parseDouble(line.substring(line.lastIndexOf(' ') + 1));
                }
            }
        }
        return sum;
    }
}
