package io.switchboard.testing;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * Simulated hosts for multi-host tests: one Linux network namespace per host, each with its own
 * loopback and one Ethernet link ({@code eth0}, a veth pair) into a bridge that lives in a further
 * namespace of its own, the "switch". The hosts get addresses in {@code 198.18.16.0/24} (RFC 2544's
 * range for network tests), which exist only inside these namespaces: the machine's own interfaces
 * and routes are never touched, and nothing in a namespace can reach anything but the other
 * namespaces.
 *
 * <pre>{@code
 * String why = NetworkNamespaces.unavailableReason();
 * Prerequisites.require("multihost", why);   // fails with the reason, or skips when turned off
 * try (NetworkNamespaces net = NetworkNamespaces.create("zk1", "client")) {
 *     ChildJvm zk = ChildJvm.start(net.launcher("zk1"), List.of("-Xmx128m"), err, QuorumPeerMain.class, cfg);
 *     net.cut("zk1");    // its link goes down: nothing in or out until heal
 *     net.heal("zk1");
 * }
 * }</pre>
 *
 * Needs root (or CAP_SYS_ADMIN and CAP_NET_ADMIN) and {@code ip} from iproute2. Closing kills every
 * process still running in the namespaces (only this test's children run there) and deletes
 * them; namespaces left by a test JVM that died without closing are deleted by the next
 * {@link #create}.
 */
public final class NetworkNamespaces implements AutoCloseable {
    private static final String SUBNET = "198.18.16.";
    private static final int FIRST_HOST = 10;
    /** Every namespace this class makes is named {@code sbnet<PID of the test JVM>-<host>}. */
    private static final Pattern OURS = Pattern.compile("sbnet(\\d+)-\\S+");

    private final String prefix;
    private final String switchNamespace;
    /** Host name to its index, in the order given: the index fixes its address and its port on the bridge. */
    private final Map<String, Integer> hosts = new LinkedHashMap<>();
    private boolean closed;

    private NetworkNamespaces(String prefix) {
        this.prefix = prefix;
        this.switchNamespace = prefix + "switch";
    }

    /** Null when namespaces can be made here; otherwise why not, in words for a skipped test. */
    public static String unavailableReason() {
        if (!System.getProperty("os.name").toLowerCase(java.util.Locale.ROOT).contains("linux")) {
            return "network namespaces need Linux; this is " + System.getProperty("os.name");
        }
        if (!onPath("ip")) {
            return "no 'ip' command (iproute2) on the PATH: cannot make network namespaces";
        }
        String probe = "sbnet" + ProcessHandle.current().pid() + "-probe";
        try {
            Result add = run(List.of("ip", "netns", "add", probe));
            if (add.status != 0) {
                return "cannot make network namespaces (this needs root or CAP_SYS_ADMIN): 'ip netns add' said "
                        + add.output.strip();
            }
            run(List.of("ip", "netns", "del", probe));
            return null;
        } catch (IOException e) {
            return "cannot run 'ip': " + e.getMessage();
        }
    }

    private static boolean onPath(String command) {
        for (String dir : System.getenv().getOrDefault("PATH", "/usr/sbin:/usr/bin:/sbin:/bin").split(":")) {
            if (Files.isExecutable(Path.of(dir, command))) {
                return true;
            }
        }
        return false;
    }

    /** Makes one namespace per host, linked into one bridge, with the addresses of {@link #address}. */
    public static NetworkNamespaces create(String... hostNames) throws IOException {
        if (hostNames.length > 200) {
            throw new IllegalArgumentException("at most 200 hosts");
        }
        removeLeftovers();
        NetworkNamespaces net = new NetworkNamespaces("sbnet" + ProcessHandle.current().pid() + "-");
        try {
            net.ip("netns", "add", net.switchNamespace);
            net.ip("-n", net.switchNamespace, "link", "add", "br0", "type", "bridge");
            net.ip("-n", net.switchNamespace, "link", "set", "br0", "up");
            for (String host : hostNames) {
                net.addHost(host);
            }
            return net;
        } catch (IOException | RuntimeException e) {
            net.close();
            throw e;
        }
    }

    private void addHost(String host) throws IOException {
        if (!host.matches("[a-z0-9]{1,12}") || hosts.containsKey(host)) {
            throw new IllegalArgumentException("host names are short, lower case and distinct: " + host);
        }
        int index = hosts.size();
        hosts.put(host, index);
        String ns = namespace(host);
        ip("netns", "add", ns);
        ip("-n", ns, "link", "set", "lo", "up");
        // both ends are made straight in their namespaces: no interface ever appears in the machine's own
        ip("link", "add", "eth0", "netns", ns, "type", "veth", "peer", "name", bridgePort(host), "netns",
                switchNamespace);
        ip("-n", switchNamespace, "link", "set", bridgePort(host), "master", "br0");
        ip("-n", switchNamespace, "link", "set", bridgePort(host), "up");
        ip("-n", ns, "addr", "add", address(host) + "/24", "dev", "eth0");
        ip("-n", ns, "link", "set", "eth0", "up");
    }

    /** The host's address on the bridge, e.g. {@code 198.18.16.10} for the first host. */
    public String address(String host) {
        return hostAddress(index(host));
    }

    /** The address of the host made {@code index}-th (from 0) by {@link #create}, in every set of namespaces. */
    public static String hostAddress(int index) {
        return SUBNET + (FIRST_HOST + index);
    }

    /** The namespace of {@code host}, as {@code ip netns} names it. */
    public String namespace(String host) {
        index(host);
        return prefix + host;
    }

    /** The words that run a command on {@code host}: {@code ip netns exec NS} (which execs the command). */
    public List<String> launcher(String host) {
        return List.of("ip", "netns", "exec", namespace(host));
    }

    /** Takes the host's link down at the bridge: the host keeps running, but nothing reaches it or leaves it. */
    public void cut(String host) throws IOException {
        ip("-n", switchNamespace, "link", "set", bridgePort(host), "down");
    }

    /** Brings the host's link up again after {@link #cut}. */
    public void heal(String host) throws IOException {
        ip("-n", switchNamespace, "link", "set", bridgePort(host), "up");
    }

    private String bridgePort(String host) {
        return "port" + index(host);
    }

    private int index(String host) {
        Integer i = hosts.get(host);
        if (i == null) {
            throw new IllegalArgumentException("no host " + host + " among " + hosts.keySet());
        }
        return i;
    }

    /** Kills what still runs in the namespaces (this test's children only) and deletes them, the switch last. */
    @Override
    public synchronized void close() {
        if (closed) {
            return;
        }
        closed = true;
        List<String> all = new ArrayList<>();
        hosts.keySet().forEach(h -> all.add(prefix + h));
        all.add(switchNamespace);
        removeNamespaces(all);
    }

    /** Namespaces of test JVMs that no longer run: a JVM killed before it could close its own. */
    private static void removeLeftovers() throws IOException {
        List<String> stale = new ArrayList<>();
        for (String line : run(List.of("ip", "netns", "list")).output.split("\n")) {
            Matcher m = OURS.matcher(line.strip().split(" ")[0]);
            if (m.matches() && ProcessHandle.of(Long.parseLong(m.group(1))).isEmpty()) {
                stale.add(m.group());
            }
        }
        removeNamespaces(stale);
    }

    private static void removeNamespaces(List<String> namespaces) {
        for (String ns : namespaces) {
            try {
                for (String pid : run(List.of("ip", "netns", "pids", ns)).output.split("\\s+")) {
                    if (!pid.isBlank()) {
                        ProcessHandle.of(Long.parseLong(pid)).ifPresent(ProcessHandle::destroyForcibly);
                    }
                }
                run(List.of("ip", "netns", "del", ns));
            } catch (IOException | RuntimeException e) {
                System.err.println("could not remove network namespace " + ns + ": " + e.getMessage());
            }
        }
    }

    private void ip(String... args) throws IOException {
        List<String> cmd = new ArrayList<>();
        cmd.add("ip");
        cmd.addAll(List.of(args));
        Result r = run(cmd);
        if (r.status != 0) {
            throw new IOException(String.join(" ", cmd) + " failed (" + r.status + "): " + r.output.strip());
        }
    }

    private record Result(int status, String output) {
    }

    private static Result run(List<String> cmd) throws IOException {
        Process p = new ProcessBuilder(cmd).redirectErrorStream(true).start();
        try {
            String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
            if (!p.waitFor(30, TimeUnit.SECONDS)) {
                p.destroyForcibly();
                throw new IOException(String.join(" ", cmd) + " did not end within 30 s");
            }
            return new Result(p.exitValue(), out);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            p.destroyForcibly();
            throw new IOException("interrupted while running " + String.join(" ", cmd), e);
        }
    }
}
