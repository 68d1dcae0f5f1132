package io.switchboard.registry.multihost;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.switchboard.testing.ChildJvm;
import io.switchboard.testing.NetworkNamespaces;
import io.switchboard.testing.Prerequisites;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.concurrent.TimeUnit;
import java.util.function.Predicate;
import java.util.stream.Collectors;
import java.util.stream.Stream;
import org.apache.zookeeper.server.quorum.QuorumPeerMain;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.MethodOrderer;
import org.junit.jupiter.api.Order;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestMethodOrder;
import org.junit.jupiter.api.Timeout;

/**
 * Several machines for real: eight hosts, each a Linux network namespace with its own address
 * (see {@link NetworkNamespaces}), every process a JVM of its own in its host:
 *
 * <pre>
 *   zk1 zk2 zk3     a ZooKeeper ensemble (QuorumPeerMain, one server per host)
 *   reg1 reg2       two registries on it, --bind 0.0.0.0
 *   comp1 comp2     the conformance component, --bind 0.0.0.0, lease 3 s; comp1 binds through
 *                   reg1 (reg2 next), comp2 through reg2 (reg1 next)
 *   client          stubs over both replicas following reg1 (reg2 next), calls increment(N)
 *                   with a new N for every call
 * </pre>
 *
 * The situations run in order, each on what the one before left. A "cut" host has its link taken
 * down: it keeps running, nothing reaches it. Executions are counted on the component servers
 * (they answer over their standard input, so a cut host is counted too): "lost" is a call the
 * client was told succeeded that ran on no server, "twice" an argument run more than once.
 * Fails, with the reason, where network namespaces cannot be made (not root, no {@code ip});
 * {@code SWITCHBOARD_TESTS_OFF=multihost} turns it off.
 */
@TestMethodOrder(MethodOrderer.OrderAnnotation.class)
@Timeout(value = 3, unit = TimeUnit.MINUTES)
class MultiHostTest {
    private static final String SECRET = "multi-host-secret";
    private static final int LEASE_SECONDS = 3;
    private static final int ZK_SESSION_MS = 4000;
    private static final Duration ANSWER = Duration.ofSeconds(60);
    private static final Duration CONVERGE = Duration.ofSeconds(60);
    /** What a registry's log says when its ZooKeeper client has a server again after losing one. */
    private static final String ZOOKEEPER_BACK = "connection back";
    /** Small heaps, and the INFO lines of Switchboard with times in each host log (target/multihost-TIME/HOST.err). */
    private static final List<String> SMALL_JVM = List.of("-Xmx128m", "-Xss512k",
            // the simulated hosts share one file system and host name: without these, a component's
            // endpoints name its Unix sockets with the client's host identity, and gRPC calls
            // "from another host" go over a socket file the network cut does not reach
            "-Dswitchboard.grpc.unix=false", "-Dswitchboard.tcp.unix=false",
            "-Dorg.slf4j.simpleLogger.log.io.switchboard=info", "-Dorg.slf4j.simpleLogger.showDateTime=true",
            // every renew, where it arrived and how long the heartbeat waited for it: what a lapsed lease needs explained
            "-Dorg.slf4j.simpleLogger.log.io.switchboard.server.ComponentServer=debug",
            "-Dorg.slf4j.simpleLogger.log.io.switchboard.registry.server.RegistryService=debug",
            "-Dorg.slf4j.simpleLogger.log.io.switchboard.client.ReplicatedChannel=debug",
            // a ZooKeeper server's "Peer state changed" lines: how the test finds the leader
            "-Dorg.slf4j.simpleLogger.log.org.apache.zookeeper.server.quorum.QuorumPeer=info",
            "-Dorg.slf4j.simpleLogger.dateTimeFormat=HH:mm:ss.SSS");

    private static NetworkNamespaces net;
    private static Path dir;
    private static final List<ChildJvm> children = new ArrayList<>();
    private static final Map<String, ChildJvm> zooKeepers = new TreeMap<>();
    private static ChildJvm comp1;
    private static ChildJvm comp2;
    private static ChildJvm client;
    private static String reg1;
    private static String reg2;

    @BeforeAll
    static void startHosts() throws Exception {
        String why = NetworkNamespaces.unavailableReason();
        Prerequisites.require("multihost", why == null ? null : "the multi-host tests cannot make hosts here: " + why);
        long started = System.nanoTime();
        net = NetworkNamespaces.create("zk1", "zk2", "zk3", "reg1", "reg2", "comp1", "comp2", "client");
        dir = Files.createDirectories(Path.of("target", "multihost-" + System.currentTimeMillis()));
        String ensemble = Stream.of("zk1", "zk2", "zk3").map(h -> net.address(h) + ":2181").collect(Collectors.joining(","));
        for (int id = 1; id <= 3; id++) {
            String host = "zk" + id;
            Path data = Files.createDirectories(dir.resolve(host));
            Files.writeString(data.resolve("myid"), id + "\n");
            Path cfg = data.resolve("zoo.cfg");
            Files.writeString(cfg, String.join("\n",
                    "tickTime=500", "initLimit=20", "syncLimit=4", "dataDir=" + data.toAbsolutePath(),
                    "clientPort=2181", "admin.enableServer=false",
                    "server.1=" + net.address("zk1") + ":2888:3888",
                    "server.2=" + net.address("zk2") + ":2888:3888",
                    "server.3=" + net.address("zk3") + ":2888:3888", ""));
            zooKeepers.put(host, child(host, QuorumPeerMain.class, cfg.toAbsolutePath().toString()));
        }
        // a registry prints its line only once it holds a ZooKeeper session: the ensemble has a quorum
        ChildJvm r1 = child("reg1", MultiHostRegistryMain.class, ensemble, SECRET, String.valueOf(ZK_SESSION_MS));
        ChildJvm r2 = child("reg2", MultiHostRegistryMain.class, ensemble, SECRET, String.valueOf(ZK_SESSION_MS));
        reg1 = r1.await("registry", ANSWER);
        reg2 = r2.await("registry", ANSWER);
        comp1 = child("comp1", MultiHostComponentMain.class, reg1 + "," + reg2, SECRET, String.valueOf(LEASE_SECONDS));
        comp2 = child("comp2", MultiHostComponentMain.class, reg2 + "," + reg1, SECRET, String.valueOf(LEASE_SECONDS));
        comp1.await("bound", ANSWER);
        comp2.await("bound", ANSWER);
        client = child("client", MultiHostClientMain.class, reg1 + "," + reg2, SECRET);
        client.await("ready", ANSWER);
        Outcome warm = Outcome.parse(client.ask("warm", ANSWER));
        assertEquals(Set.of(net.address("comp1"), net.address("comp2")), warm.hosts.keySet(), "warmed: " + warm);
        System.out.printf("eight hosts up in %.1f s; registries %s and %s%n", (System.nanoTime() - started) / 1e9,
                reg1, reg2);
    }

    private static ChildJvm child(String host, Class<?> main, String... args) throws IOException {
        ChildJvm c = ChildJvm.start(net.launcher(host), SMALL_JVM, dir.resolve(host + ".err"), main, args);
        children.add(c);
        return c;
    }

    @AfterAll
    static void stopHosts() {
        for (ChildJvm c : children) {
            try {
                c.kill();
            } catch (Exception e) {
                System.err.println("could not kill a child: " + e);
            }
        }
        if (net != null) {
            net.close();
        }
    }

    @Test
    @Order(1)
    void callsOverBothProtocolsFromAnotherHostSucceed() throws Exception {
        // bound with --bind 0.0.0.0, each entry publishes its host's own address, which the client reaches
        assertEquals(Set.of(net.address("comp1"), net.address("comp2")), hostsOf(lookup(reg1, "Conformance")));
        Outcome grpc = Outcome.parse(client.ask("calls grpc 1 20", ANSWER));
        Outcome soap = Outcome.parse(client.ask("calls soap 21 20", ANSWER));
        assertEquals(List.of(), grpc.failed);
        assertEquals(List.of(), soap.failed);
        assertEquals(Map.of("grpc", 20), grpc.protocols, grpc.toString());
        assertEquals(Map.of("soap", 20), soap.protocols, soap.toString());
        assertEquals(Map.of("grpc/tcp", 20), grpc.vias, "over the network, as from another host: " + grpc);
        assertEquals(Set.of(net.address("comp1"), net.address("comp2")), grpc.hosts.keySet(), "calls reach both replicas");
        assertEquals(Set.of(net.address("comp1"), net.address("comp2")), soap.hosts.keySet());
        assertEachRanOnce(grpc, soap);
    }

    @Test
    @Order(2)
    void oneZooKeeperServerKilledTheQuorumHoldsAndNothingIsLost() throws Exception {
        assertEquals("ok", client.ask("bind " + reg1 + " MarkerBefore", ANSWER));
        String instancesBefore = client.ask("lookup " + reg2 + " Conformance", ANSWER);
        String leader = leader();
        int reg1Back = occurrences("reg1", ZOOKEEPER_BACK);
        int reg2Back = occurrences("reg2", ZOOKEEPER_BACK);
        zooKeepers.get(leader).kill();
        long killed = System.nanoTime();
        System.out.println("killed the ZooKeeper server on " + leader + " (the leader, by its log)");
        // the two left elect a new leader before they take writes, and every ZooKeeper client loses
        // its connection (a follower without a leader drops its clients). A registry takes writes
        // again once its client has found a server that serves: after the election, and after the
        // client's own pause between rounds over the servers, seconds on a starved machine, longer
        // than the test client's call timeout
        System.out.println("the ZooKeeper servers left elected " + awaitLeaderOtherThan(leader));
        long back = System.nanoTime() + ANSWER.toNanos();
        assertTrue(awaitLog("reg1", ZOOKEEPER_BACK, reg1Back + 1, back) && awaitLog("reg2", ZOOKEEPER_BACK, reg2Back + 1, back),
                "both registries are connected to ZooKeeper again");
        System.out.printf("both registries were connected to ZooKeeper again %.1f s after the kill%n",
                (System.nanoTime() - killed) / 1e9);

        // a write needs a quorum: two of three servers still make one. The other registry shows it
        // once its cache has heard of it (a watch event later; sooner or later than this lookup)
        assertEquals("ok", client.ask("bind " + reg2 + " MarkerAfter", ANSWER));
        long bound = System.nanoTime();
        awaitLookup(reg1, "MarkerAfter", hosts -> !hosts.isEmpty());
        System.out.printf("the other registry showed the bind %.1f ms after it was acknowledged%n",
                (System.nanoTime() - bound) / 1e6);
        assertEquals("MarkerAfter-instance@" + net.address("comp1"), client.ask("lookup " + reg1 + " MarkerAfter", ANSWER)
                .replace(net.address("comp2"), net.address("comp1")));
        assertFalse(client.ask("lookup " + reg2 + " MarkerBefore", ANSWER).isEmpty(), "the entry bound before is kept");
        assertEquals(instancesBefore, client.ask("lookup " + reg1 + " Conformance", ANSWER),
                "the same instances, none lost or bound anew");
        Outcome calls = Outcome.parse(client.ask("calls both 101 20", ANSWER));
        assertEquals(List.of(), calls.failed);
        assertEachRanOnce(calls);
    }

    @Test
    @Order(3)
    void aComponentHostCutOffLeavesAndCallsMoveToTheOtherReplica() throws Exception {
        assertEquals("started", client.ask("start 1001", ANSWER));
        awaitProgress(10);
        net.cut("comp1");
        long cut = System.nanoTime();
        assertEquals(net.address("comp2"), client.ask("replicas 1", ANSWER), "the cut host's entry left");
        System.out.printf("the cut host's entry left the client's replicas %.1f s after the cut%n", (System.nanoTime() - cut) / 1e9);
        int beforeLeaving = Integer.parseInt(client.ask("progress 0", ANSWER).split(" ")[0]);
        awaitProgress(beforeLeaving + 10);
        assertEquals(Set.of(net.address("comp2")), hostsOf(lookup(reg2, "Conformance")));
        Outcome after = Outcome.parse(client.ask("calls both 201 20", ANSWER));
        Outcome during = Outcome.parse(client.ask("stop", ANSWER));
        System.out.println("background calls around the cut: " + during.ok.size() + " succeeded, failed " + during.failed
                + ", by host " + during.hosts);
        assertEquals(List.of(), after.failed);
        assertEquals(Set.of(net.address("comp2")), after.hosts.keySet());
        // a call in flight to the cut host may have run there: the client is told so (MAY_HAVE_RUN),
        // and it is not repeated; every other call moved to the other replica
        assertTrue(during.failed.stream().allMatch(f -> f.endsWith("/MAY_HAVE_RUN")), during.failed.toString());
        assertTrue(during.failed.size() <= 3, "at most the calls in flight to the cut host fail: " + during.failed);
        assertEachRanOnce(during, after);
    }

    @Test
    @Order(4)
    void theComponentHostHealedItsEntryComesBack() throws Exception {
        net.heal("comp1");
        long healed = System.nanoTime();
        Set<String> both = Set.of(net.address("comp1"), net.address("comp2"));
        assertEquals(String.join(",", new java.util.TreeSet<>(both)), client.ask("replicas 2", ANSWER));
        System.out.printf("the healed host was back in the client's replicas %.1f s after%n", (System.nanoTime() - healed) / 1e9);
        awaitLookup(reg1, "Conformance", hosts -> hosts.equals(both));
        Outcome calls = Outcome.parse(client.ask("calls both 301 20", ANSWER));
        assertEquals(List.of(), calls.failed);
        assertEquals(both, calls.hosts.keySet(), "the healed host takes calls again");
        assertEachRanOnce(calls);
    }

    @Test
    @Order(5)
    void aRegistryHostCutOffClientsUseTheOther() throws Exception {
        String comp1Instance = comp1Instance();
        assertEquals("started", client.ask("watch " + reg2 + " Conformance", ANSWER));
        assertEquals("started", client.ask("start 2001", ANSWER));
        awaitProgress(10);
        String takeOver = "took over the lease of Conformance (" + comp1Instance + ")";
        int takeOversBefore = occurrences("reg2", takeOver);
        net.cut("reg1");
        long cut = System.nanoTime();
        // comp1's entry lives with reg1 when comp1 bound it there (after its heal it may have bound
        // through reg2 instead: then nothing moves). Its renews go to reg2 now, which takes the entry
        // over in the store (the ZooKeeper node moves to reg2's session) before reg1's session ends
        // and would take it along
        long sessionGone = cut + Duration.ofMillis(ZK_SESSION_MS + 2000).toNanos();
        if (awaitLog("reg2", takeOver, takeOversBefore + 1, sessionGone)) {
            System.out.printf("comp1's entry was taken over by the other registry %.1f s after the cut%n",
                    (System.nanoTime() - cut) / 1e9);
        } else {
            System.out.println("comp1's entry lived with the other registry already: nothing to take over");
        }
        String[] viaClient = client.ask("registry Conformance", ANSWER).split(" ");
        System.out.println("a lookup through the client's registries (the first cut off) took " + viaClient[0] + " ms");
        assertTrue(hostsOf(viaClient[1]).contains(net.address("comp2")), "the other registry answered: " + viaClient[1]);
        assertEquals(Set.of(net.address("comp1"), net.address("comp2")), hostsOf(lookup(reg2, "Conformance")));
        Outcome calls = Outcome.parse(client.ask("calls both 401 20", ANSWER));
        Outcome during = Outcome.parse(client.ask("stop", ANSWER));
        System.out.println("background calls while a registry was cut off: " + during.ok.size() + " succeeded, failed "
                + during.failed + ", by host " + during.hosts);
        assertEquals(List.of(), calls.failed);
        assertEquals(List.of(), during.failed, "calls never wait on a registry");
        assertEachRanOnce(calls, during);
        // past the moment ZooKeeper ends reg1's session (and its ephemeral nodes), comp1's entry never left
        long left = sessionGone - System.nanoTime();
        if (left > 0) {
            Thread.sleep(left / 1_000_000);   // a time to pass, not an event to wait for
        }
        assertEquals(List.of("APPEAR:" + comp1Instance), eventsOf(comp1Instance),
                "the watch on reg2 saw comp1's entry once, and never leave");
    }

    @Test
    @Order(6)
    void theRegistryHostHealedHoldsTheEntriesAgain() throws Exception {
        int eventsBefore = client.ask("events", ANSWER).split(",").length;
        String lapsed = "lease of Conformance (" + comp1Instance() + ") ran out";
        int lapsedBefore = occurrences("reg2", lapsed);
        net.heal("reg1");
        Set<String> both = Set.of(net.address("comp1"), net.address("comp2"));
        awaitLookup(reg1, "Conformance", hosts -> hosts.equals(both));
        assertEquals(both, hostsOf(client.ask("replicas 2", ANSWER)));
        assertFalse(client.ask("lookup " + reg1 + " MarkerBefore", ANSWER).isEmpty());
        assertFalse(client.ask("lookup " + reg1 + " MarkerAfter", ANSWER).isEmpty());
        Outcome calls = Outcome.parse(client.ask("calls both 501 20", ANSWER));
        assertEquals(List.of(), calls.failed);
        assertEquals(both, calls.hosts.keySet());
        assertEachRanOnce(calls);
        // comp1's renews go back to reg1, which takes the entry back; reg2's lease of it lapses and
        // must leave it alone, not drop the entry for comp1 to bind again
        assertTrue(awaitLog("reg2", lapsed, lapsedBefore + 1, System.nanoTime() + CONVERGE.toNanos()),
                "reg2's lease of comp1 ran out once its renews went back to reg1");
        List<String> events = Arrays.asList(client.ask("events", ANSWER).split(","));
        List<String> after = events.subList(Math.min(eventsBefore, events.size()), events.size());
        System.out.println("entry changes seen on reg2 after the registry host healed: " + after);
        assertEquals(List.of(), after, "no entry left or came back around the heal");
    }

    // ---- helpers

    /** What the client reported for a run of calls. */
    record Outcome(List<Integer> ok, List<String> failed, Map<String, Integer> protocols, Map<String, Integer> hosts,
                   Map<String, Integer> vias, List<String> attemptsFailed) {
        static Outcome parse(String answer) {
            Map<String, String> fields = new HashMap<>();
            for (String part : answer.split(" ")) {
                int eq = part.indexOf('=');
                assertTrue(eq > 0, "not an answer to calls: " + answer);
                fields.put(part.substring(0, eq), part.substring(eq + 1));
            }
            return new Outcome(list(fields.get("ok")).stream().map(Integer::valueOf).toList(),
                    list(fields.get("failed")), counts(fields.get("protocols")), counts(fields.get("hosts")),
                    counts(fields.get("vias")), list(fields.get("attemptsFailed")));
        }

        private static List<String> list(String s) {
            return s == null || s.isEmpty() ? List.of() : Arrays.asList(s.split(","));
        }

        private static Map<String, Integer> counts(String s) {
            Map<String, Integer> m = new TreeMap<>();
            for (String kv : list(s)) {
                int colon = kv.lastIndexOf(':');
                m.put(kv.substring(0, colon), Integer.valueOf(kv.substring(colon + 1)));
            }
            return m;
        }
    }

    /**
     * Counted on the servers: every call the client saw succeed ran exactly once (none lost), a
     * call it saw fail ran at most once, and no argument ever ran twice.
     */
    private static void assertEachRanOnce(Outcome... outcomes) throws IOException {
        Map<Integer, Integer> runs = new HashMap<>();
        for (ChildJvm server : List.of(comp1, comp2)) {
            String answer = server.ask("runs", ANSWER);
            for (String kv : answer.isEmpty() ? new String[0] : answer.split(",")) {
                String[] p = kv.split(":");
                runs.merge(Integer.valueOf(p[0]), Integer.valueOf(p[1]), Integer::sum);
            }
        }
        for (Outcome o : outcomes) {
            for (int by : o.ok) {
                assertEquals(1, runs.getOrDefault(by, 0), "call " + by + " succeeded: it ran exactly once");
            }
            for (String f : o.failed) {
                int by = Integer.parseInt(f.substring(0, f.indexOf('/')));
                assertTrue(runs.getOrDefault(by, 0) <= 1, "call " + by + " failed and ran at most once");
            }
        }
        List<Integer> twice = runs.entrySet().stream().filter(e -> e.getValue() > 1).map(Map.Entry::getKey).toList();
        assertEquals(List.of(), twice, "no call ran twice");
    }

    private static void awaitProgress(int successes) throws IOException {
        String[] p = client.ask("progress " + successes, ANSWER).split(" ");
        assertTrue(Integer.parseInt(p[0]) >= successes, "the background calls made no progress: " + String.join(" ", p));
    }

    private static String comp1Instance() throws IOException {
        for (String s : lookup(reg2, "Conformance").split(",")) {
            if (s.endsWith("@" + net.address("comp1"))) {
                return s.substring(0, s.indexOf('@'));
            }
        }
        throw new AssertionError("comp1 is not bound");
    }

    /** The events the client's watch on reg2 saw for {@code instance}. */
    private static List<String> eventsOf(String instance) throws IOException {
        return Arrays.stream(client.ask("events", ANSWER).split(",")).filter(e -> e.endsWith(":" + instance)).toList();
    }

    /** How many lines of {@code host}'s log contain {@code text}. */
    private static int occurrences(String host, String text) throws IOException {
        try (Stream<String> lines = Files.lines(dir.resolve(host + ".err"))) {
            return (int) lines.filter(l -> l.contains(text)).count();
        }
    }

    /** Waits until {@code host}'s log has {@code count} lines that contain {@code text}; false if not by {@code end} (nanoTime). */
    private static boolean awaitLog(String host, String text, int count, long end) throws Exception {
        while (occurrences(host, text) < count) {
            if (System.nanoTime() > end) {
                return false;
            }
            Thread.sleep(100);   // reading a log another process writes
        }
        return true;
    }

    private static String lookup(String registry, String name) throws IOException {
        String answer = client.ask("lookup " + registry + " " + name, ANSWER);
        assertFalse(answer.startsWith("error"), answer);
        return answer;
    }

    private static Set<String> hostsOf(String lookupAnswer) {
        return Arrays.stream(lookupAnswer.split(",")).filter(s -> !s.isEmpty())
                .map(s -> s.substring(s.indexOf('@') + 1)).collect(Collectors.toSet());
    }

    /** Asks one registry again until what it holds under {@code name} passes {@code wanted}. */
    private static void awaitLookup(String registry, String name, Predicate<Set<String>> wanted) throws Exception {
        long end = System.nanoTime() + CONVERGE.toNanos();
        String last = "";
        while (System.nanoTime() < end) {
            last = client.ask("lookup " + registry + " " + name, ANSWER);
            if (!last.startsWith("error") && wanted.test(hostsOf(last))) {
                return;
            }
            Thread.sleep(200);   // between questions to the registry, not a wait for an event
        }
        throw new AssertionError(registry + " did not come to hold the wanted " + name + " within " + CONVERGE
                + "; last answer: " + last);
    }

    /** The ZooKeeper host whose log says it leads; the last one if no log says so. */
    /** The ZooKeeper host that leads, by its log. */
    private static String leader() throws IOException, InterruptedException {
        return awaitLeaderOtherThan(null);
    }

    /** The ZooKeeper host other than {@code gone} that leads, by its log, once one does. */
    private static String awaitLeaderOtherThan(String gone) throws IOException, InterruptedException {
        long end = System.nanoTime() + ANSWER.toNanos();
        while (System.nanoTime() < end) {
            for (String host : zooKeepers.keySet()) {
                if (!host.equals(gone) && leads(host)) {
                    return host;
                }
            }
            Thread.sleep(100);   // reading a log another process writes
        }
        throw new AssertionError("no ZooKeeper server" + (gone == null ? "" : " but " + gone) + " leads within " + ANSWER);
    }

    /** Whether the host's log says it leads: its last "leading" state change comes after its last "following". */
    private static boolean leads(String host) throws IOException {
        String log = Files.readString(dir.resolve(host + ".err"));
        int leading = log.lastIndexOf("Peer state changed: leading");
        return leading >= 0 && leading > log.lastIndexOf("Peer state changed: following");
    }
}
