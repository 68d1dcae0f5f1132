package io.switchboard.cli;

import io.switchboard.client.Switchboard;
import io.switchboard.registry.RegistryEvent;
import io.switchboard.registry.RegistryWatch;
import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;

/**
 * One watcher JVM of {@code registry-bench --watcher-jvms}: {@code COUNT} {@link Switchboard}
 * clients, each of its own (as that many processes would have), watcher {@code i} following name
 * {@code PREFIX + (i % NAMES)} for i from {@code FIRST}. Prints {@code SYNCED n} once every watch
 * has its snapshot, then for each instance {@code wK} bound, once every watcher here of its name
 * was told, {@code TOLD K MILLIS N}: the wall clock (comparable across JVMs of one host, which
 * {@code System.nanoTime} is not) when the last of them was told, and how many. Ends when its
 * standard input closes.
 *
 * <pre>{@code
 * java -cp ... io.switchboard.cli.RegistryWatchersMain http://127.0.0.1:8085/axis2/services/Registry BenchW 100 0 1000
 * }</pre>
 */
public final class RegistryWatchersMain {
    private RegistryWatchersMain() {
    }

    public static void main(String[] args) throws Exception {
        String url = args[0];
        String prefix = args[1];
        int names = Integer.parseInt(args[2]);
        int first = Integer.parseInt(args[3]);
        int count = Integer.parseInt(args[4]);
        int[] perName = new int[names];
        for (int i = first; i < first + count; i++) {
            perName[i % names]++;
        }
        Map<Integer, AtomicInteger> told = new ConcurrentHashMap<>();
        Map<Integer, AtomicLong> last = new ConcurrentHashMap<>();
        List<Switchboard> clients = new ArrayList<>();
        List<RegistryWatch> watches = new ArrayList<>();
        for (int i = first; i < first + count; i++) {
            int name = i % names;
            Switchboard sb = Switchboard.connect(url);
            clients.add(sb);
            watches.add(sb.watch(prefix + name, e -> {
                if (e.kind() != RegistryEvent.Kind.APPEAR || !e.instanceId().startsWith("w")) {
                    return;
                }
                long now = System.currentTimeMillis();
                int k = Integer.parseInt(e.instanceId().substring(1));
                last.computeIfAbsent(k, x -> new AtomicLong()).accumulateAndGet(now, Math::max);
                int n = told.computeIfAbsent(k, x -> new AtomicInteger()).incrementAndGet();
                if (n == perName[name]) {
                    System.out.println("TOLD " + k + " " + last.get(k).get() + " " + n);
                    System.out.flush();
                }
            }));
        }
        for (RegistryWatch w : watches) {
            if (!w.awaitSynced(Duration.ofMinutes(5))) {
                System.out.println("FAILED a watch did not sync within 5 minutes: " + w.refusal());
                System.out.flush();
                System.exit(1);
            }
        }
        System.out.println("SYNCED " + watches.size());
        System.out.flush();
        // until the bench closes our input (or ends)
        try (BufferedReader in = new BufferedReader(new InputStreamReader(System.in, StandardCharsets.UTF_8))) {
            while (in.readLine() != null) {
                // nothing is asked on the input: its end is the signal
            }
        }
        watches.forEach(RegistryWatch::close);
        clients.forEach(Switchboard::close);
        System.exit(0);
    }
}
