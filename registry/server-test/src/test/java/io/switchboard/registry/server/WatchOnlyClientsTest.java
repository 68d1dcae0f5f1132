package io.switchboard.registry.server;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.switchboard.registry.RegistryClient;
import io.switchboard.registry.RegistryEvent;
import io.switchboard.registry.RegistryWatch;
import java.io.IOException;
import java.net.URI;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.function.IntSupplier;
import org.junit.jupiter.api.Test;

/**
 * Clients that only watch, one client object each as separate processes would have: their
 * snapshots and changes come over the watch stream, and none keeps a SOAP connection open at the
 * registry (thousands of them filled the SOAP listener's limit, which then displaced them).
 */
class WatchOnlyClientsTest {
    private static final Duration GENEROUS = Duration.ofSeconds(60);
    private static final int CLIENTS = 40;
    private static final int NAMES = 4;

    @Test
    void watchOnlyClientsHoldNoSoapConnectionAndAreAllTold() throws Exception {
        try (RegistryServer registry = RegistryServer.builder().secret("s").start()) {
            int soapPort = URI.create(registry.endpoint()).getPort();
            IntSupplier soapConnections = () -> establishedTo(soapPort);
            try (RegistryClient writer = RegistryClient.connect(registry.endpoint(), "s")) {
                writer.bind(RegistryWatchTest.entry("Watched0", "before", 1001, 0));
                // the count sees a client that does hold one: the writer, between its calls
                assertTrue(soapConnections.getAsInt() >= 1, "the writer's SOAP connection is not seen");
            }
            awaitZero(soapConnections, "after the writer closed");

            List<RegistryClient> clients = new ArrayList<>();
            List<RegistryWatch> watches = new ArrayList<>();
            CountDownLatch snapshotTold = new CountDownLatch(CLIENTS / NAMES);
            CountDownLatch bindTold = new CountDownLatch(CLIENTS);
            try {
                for (int i = 0; i < CLIENTS; i++) {
                    RegistryClient c = RegistryClient.connect(registry.endpoint());
                    clients.add(c);
                    watches.add(RegistryWatch.start(c, List.of("Watched" + (i % NAMES)), e -> {
                        if (e.kind() == RegistryEvent.Kind.APPEAR && e.instanceId().equals("before")) {
                            snapshotTold.countDown();
                        } else if (e.kind() == RegistryEvent.Kind.APPEAR && e.instanceId().equals("after")) {
                            bindTold.countDown();
                        }
                    }));
                }
                for (RegistryWatch w : watches) {
                    assertTrue(w.awaitSynced(GENEROUS), "a watch did not sync");
                }
                assertTrue(snapshotTold.await(GENEROUS.toSeconds(), TimeUnit.SECONDS),
                        "the instance bound before was not in every snapshot");
                awaitZero(soapConnections, "while " + CLIENTS + " clients watch");
                assertEquals(CLIENTS, registry.openWatchStreams(), "a stream per watch");

                try (RegistryClient writer = RegistryClient.connect(registry.endpoint(), "s")) {
                    for (int n = 0; n < NAMES; n++) {
                        writer.bind(RegistryWatchTest.entry("Watched" + n, "after", 1002, 0));
                    }
                }
                assertTrue(bindTold.await(GENEROUS.toSeconds(), TimeUnit.SECONDS),
                        bindTold.getCount() + " watchers were not told of the bind");
                awaitZero(soapConnections, "after the binds were told");
                assertEquals(0, registry.shedConnections(), "no SOAP connection was shed");
            } finally {
                watches.forEach(RegistryWatch::close);
                clients.forEach(RegistryClient::close);
            }
        }
    }

    /**
     * Waits (at most 5 s: an idle pooled connection lives 10 s, so one kept open is still seen)
     * until no connection to {@code port} is established.
     */
    private static void awaitZero(IntSupplier connections, String when) throws InterruptedException {
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(5);
        int open = connections.getAsInt();
        while (open != 0 && System.nanoTime() < deadline) {
            Thread.sleep(20);   // polls the kernel's table: there is nothing to wait on
            open = connections.getAsInt();
        }
        assertEquals(0, open, "SOAP connections open at the registry " + when);
    }

    /** Established TCP connections whose local port is {@code port}: the server's side, in this JVM's host table. */
    static int establishedTo(int port) {
        int n = 0;
        for (String table : List.of("/proc/net/tcp", "/proc/net/tcp6")) {
            if (!Files.exists(Path.of(table))) {
                continue;
            }
            try {
                List<String> lines = Files.readAllLines(Path.of(table));
                for (String line : lines.subList(1, lines.size())) {
                    String[] f = line.trim().split("\\s+");
                    String local = f[1];
                    int localPort = Integer.parseInt(local.substring(local.indexOf(':') + 1), 16);
                    if (localPort == port && f[3].equals("01")) {
                        n++;
                    }
                }
            } catch (IOException e) {
                throw new IllegalStateException("cannot read " + table + ": " + e.getMessage(), e);
            }
        }
        return n;
    }
}
