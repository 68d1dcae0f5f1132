package io.switchboard.registry.multihost;

import io.switchboard.client.ReplicatedChannel;
import io.switchboard.client.Switchboard;
import io.switchboard.metastub.CallRecord;
import io.switchboard.metastub.Policies;
import io.switchboard.protocol.CallOptions;
import io.switchboard.protocol.ClientSettings;
import io.switchboard.protocol.Endpoint;
import io.switchboard.protocol.TransportException;
import io.switchboard.registry.ComponentEntry;
import io.switchboard.registry.RegistryClient;
import io.switchboard.registry.RegistryWatch;
import io.switchboard.testing.conformance.Conformance;
import io.switchboard.testing.conformance.ConformanceComponent;
import io.switchboard.testing.conformance.ConformanceStub;
import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Collectors;

/**
 * The client host of {@link MultiHostTest}, driven by lines on standard input, each answered by
 * one line that starts with the command's name. Its stubs follow the registries {@code args[0]}
 * (comma-separated); {@code args[1]} is the shared secret, for the test's marker entries.
 *
 * <ul>
 *   <li>{@code calls PROTOCOL FROM COUNT}: {@code increment(FROM)}, {@code increment(FROM+1)}, ...
 *       one after another over {@code grpc}, {@code soap} or {@code both} (in turn);</li>
 *   <li>{@code warm}: two pings per replica over each protocol, each given 60 s, so that the
 *       calls counted after it find the connections made and the servers' code loaded;</li>
 *   <li>{@code start FROM} and {@code stop}: the same over both protocols on a thread of its own,
 *       from FROM on until stopped;</li>
 *   <li>{@code progress N}: waits until the background calls have N successes (30 s at most);</li>
 *   <li>{@code replicas N}: waits until the stubs' replica set has N instances (30 s at most);</li>
 *   <li>{@code registry NAME}: looks NAME up through the client's own registry client, which moves
 *       between the registries; answers the milliseconds it took and the instances;</li>
 *   <li>{@code watch URL NAME} and {@code events}: a watch on one registry alone, and the events it
 *       has seen so far ({@code KIND:INSTANCE,...});</li>
 *   <li>{@code lookup URL NAME}: what one registry alone holds under NAME, or its error;</li>
 *   <li>{@code bind URL NAME}: binds NAME without a lease through one registry, at the endpoints of
 *       a bound conformance instance (the registry wants an entry it could serve).</li>
 * </ul>
 *
 * The answer to calls and stop: {@code ok=ARGS failed=ARG/DELIVERY,... protocols=P:N,... hosts=ADDR:N,...},
 * where protocols and hosts count the attempts that succeeded, from the meta-stubs' call records,
 * followed by {@code vias=PROTOCOL/VIA:N,...} (how those attempts went: {@code grpc/tcp},
 * {@code grpc/unix}) and {@code attemptsFailed=PROTOCOL@ADDR/MILLISms/ERROR,...} (the attempts
 * that failed, including those a fallback then made good).
 */
public final class MultiHostClientMain {
    private static final Pattern IPV4 = Pattern.compile("(\\d+\\.\\d+\\.\\d+\\.\\d+)");
    /** Each thread's tally: call records arrive on the caller's thread. */
    private static final ThreadLocal<Tally> TALLY = ThreadLocal.withInitial(Tally::new);

    private MultiHostClientMain() {
    }

    /** What one run of calls did. */
    static final class Tally {
        final List<Integer> ok = Collections.synchronizedList(new ArrayList<>());
        final List<String> failed = Collections.synchronizedList(new ArrayList<>());
        final Map<String, Integer> protocols = new TreeMap<>();
        final Map<String, Integer> hosts = new TreeMap<>();
        /** PROTOCOL/VIA of the attempts that succeeded: {@code grpc/tcp}, {@code grpc/unix}, {@code soap/null}. */
        final Map<String, Integer> vias = new TreeMap<>();
        /** Attempts that failed, a call's fallback after them counted above: what explains a protocol count. */
        final List<String> attemptsFailed = new ArrayList<>();

        synchronized void record(CallRecord r) {
            Matcher m = IPV4.matcher(r.address());
            String host = m.find() ? m.group(1) : r.address();
            if (r.succeeded()) {
                protocols.merge(r.protocol(), 1, Integer::sum);
                hosts.merge(host, 1, Integer::sum);
                vias.merge(r.protocol() + "/" + r.via(), 1, Integer::sum);
            } else {
                attemptsFailed.add(r.protocol() + "@" + host + "/" + r.latency().toMillis() + "ms/"
                        + String.valueOf(r.error()).replaceAll("[\\s,=]+", "_"));
            }
        }

        @Override
        public synchronized String toString() {
            return "ok=" + ok.stream().map(String::valueOf).collect(Collectors.joining(","))
                    + " failed=" + String.join(",", failed)
                    + " protocols=" + join(protocols) + " hosts=" + join(hosts) + " vias=" + join(vias)
                    + " attemptsFailed=" + String.join(",", attemptsFailed);
        }

        private static String join(Map<String, Integer> counts) {
            return counts.entrySet().stream().map(e -> e.getKey() + ":" + e.getValue()).collect(Collectors.joining(","));
        }
    }

    public static void main(String[] args) throws Exception {
        // short timeouts: a cut host must cost a call seconds, not the default two minutes
        ClientSettings settings = ClientSettings.defaults().withCallTimeout(Duration.ofSeconds(3));
        Switchboard overGrpc = Switchboard.builder(args[0]).protocols("grpc", "soap").policy(Policies.byName("fixed:grpc"))
                .settings(settings).listener(r -> TALLY.get().record(r)).connect();
        Switchboard overSoap = Switchboard.builder(args[0]).protocols("grpc", "soap").policy(Policies.byName("fixed:soap"))
                .settings(settings).listener(r -> TALLY.get().record(r)).connect();
        ReplicatedChannel grpcChannel = overGrpc.replicas("Conformance", ConformanceComponent.DESCRIPTOR);
        ReplicatedChannel soapChannel = overSoap.replicas("Conformance", ConformanceComponent.DESCRIPTOR);
        ConformanceStub grpc = ConformanceComponent.stub(grpcChannel);
        ConformanceStub soap = ConformanceComponent.stub(soapChannel);
        AtomicBoolean running = new AtomicBoolean();
        Thread[] background = new Thread[1];
        Tally[] backgroundTally = {new Tally()};
        List<String> events = new CopyOnWriteArrayList<>();
        System.out.println("ready " + grpcChannel.entries().size());
        System.out.flush();

        BufferedReader in = new BufferedReader(new InputStreamReader(System.in, StandardCharsets.UTF_8));
        for (String line = in.readLine(); line != null; line = in.readLine()) {
            String[] w = line.split(" ");
            String answer;
            try {
                switch (w[0]) {
                    case "calls" -> {
                        Tally t = new Tally();
                        TALLY.set(t);
                        int from = Integer.parseInt(w[2]);
                        for (int i = 0; i < Integer.parseInt(w[3]); i++) {
                            boolean useGrpc = w[1].equals("grpc") || (w[1].equals("both") && i % 2 == 0);
                            call(useGrpc ? grpc : soap, from + i, t);
                        }
                        answer = t.toString();
                    }
                    case "warm" -> {
                        // each replica's first call over each protocol, given the time a cold JVM on
                        // a busy machine takes: under the 3 s above it may fall back and count as
                        // the other protocol's (seen with the whole suite's modules beside it)
                        Tally t = new Tally();
                        TALLY.set(t);
                        CallOptions patient = CallOptions.DEFAULT.withTimeout(Duration.ofSeconds(60));
                        for (int i = 0; i < 2 * grpcChannel.entries().size(); i++) {
                            grpc.withOptions(patient).ping();   // an idle channel takes its replicas in turn
                            soap.withOptions(patient).ping();
                        }
                        answer = t.toString();
                    }
                    case "start" -> {
                        int from = Integer.parseInt(w[1]);
                        running.set(true);
                        backgroundTally[0] = new Tally();
                        background[0] = new Thread(() -> {
                            TALLY.set(backgroundTally[0]);
                            for (int by = from; running.get(); by++) {
                                call(by % 2 == 0 ? grpc : soap, by, backgroundTally[0]);
                                pause(5);   // a steady stream of calls, not a load test on two shared cores
                            }
                        }, "background-calls");
                        background[0].start();
                        answer = "started";
                    }
                    case "stop" -> {
                        running.set(false);
                        background[0].join();
                        answer = backgroundTally[0].toString();
                    }
                    case "progress" -> {
                        long end = System.nanoTime() + Duration.ofSeconds(30).toNanos();
                        while (backgroundTally[0].ok.size() < Integer.parseInt(w[1]) && System.nanoTime() < end) {
                            Thread.sleep(10);   // polling the background thread's counter
                        }
                        answer = backgroundTally[0].ok.size() + " " + backgroundTally[0].failed.size();
                    }
                    case "registry" -> {
                        long t0 = System.nanoTime();
                        List<ComponentEntry> found = overGrpc.registry().lookup(w[1]);
                        answer = (System.nanoTime() - t0) / 1_000_000 + " " + found.stream()
                                .map(e -> e.instanceId() + "@" + host(e)).sorted().collect(Collectors.joining(","));
                    }
                    case "watch" -> {
                        RegistryClient one = RegistryClient.connect(List.of(w[1]), null, settings);
                        RegistryWatch.start(one, List.of(w[2]), e -> events.add(e.kind() + ":" + e.instanceId()))
                                .awaitSynced(Duration.ofSeconds(30));
                        answer = "started";
                    }
                    case "events" -> answer = String.join(",", events);
                    case "replicas" -> answer = awaitReplicas(grpcChannel, soapChannel, Integer.parseInt(w[1]));
                    case "lookup" -> {
                        try (RegistryClient one = RegistryClient.connect(List.of(w[1]), null, settings)) {
                            answer = one.lookup(w[2]).stream().map(e -> e.instanceId() + "@" + host(e))
                                    .sorted().collect(Collectors.joining(","));
                        }
                    }
                    case "bind" -> {
                        ComponentEntry model = grpcChannel.entries().get(0);
                        try (RegistryClient one = RegistryClient.connect(List.of(w[1]), args[1], settings)) {
                            one.bind(new ComponentEntry(w[2], w[2] + "-instance", model.endpoints(),
                                    model.interfaceSchema(), model.interfaceProto(), model.wsdlUrl(), null,
                                    model.features(), 0));
                        }
                        answer = "ok";
                    }
                    default -> answer = "unknown command";
                }
            } catch (RuntimeException e) {
                answer = "error " + e;
            }
            System.out.println(w[0] + " " + answer.replace('\n', ' '));
            System.out.flush();
        }
        running.set(false);
        overGrpc.close();
        overSoap.close();
    }

    private static void call(Conformance stub, int by, Tally t) {
        try {
            stub.increment(by);
            t.ok.add(by);
        } catch (TransportException e) {
            t.failed.add(by + "/" + e.delivery());
        } catch (RuntimeException e) {
            t.failed.add(by + "/" + e.getClass().getSimpleName());
        }
    }

    private static void pause(long millis) {
        try {
            Thread.sleep(millis);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }

    private static String awaitReplicas(ReplicatedChannel a, ReplicatedChannel b, int count) throws InterruptedException {
        long end = System.nanoTime() + Duration.ofSeconds(30).toNanos();
        while (a.entries().size() != count || b.entries().size() != count) {
            if (System.nanoTime() > end) {
                return "timeout " + hosts(a);
            }
            Thread.sleep(20);   // polling the channel's own state, which the registry watch updates
        }
        return hosts(a);
    }

    private static String hosts(ReplicatedChannel c) {
        return c.entries().stream().map(MultiHostClientMain::host).sorted().collect(Collectors.joining(","));
    }

    private static String host(ComponentEntry e) {
        for (Endpoint ep : e.endpoints()) {
            Matcher m = IPV4.matcher(ep.address());
            if (m.find()) {
                return m.group(1);
            }
        }
        return "?";
    }
}
