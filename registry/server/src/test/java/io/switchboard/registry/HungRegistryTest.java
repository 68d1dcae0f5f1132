package io.switchboard.registry;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.switchboard.protocol.ClientSettings;
import io.switchboard.protocol.Endpoint;
import io.switchboard.registry.server.ScratchZooKeeper;
import io.switchboard.registry.server.ZooKeeperRegistryMain;
import io.switchboard.testing.ChildJvm;
import io.switchboard.testing.conformance.ConformanceComponent;
import java.io.IOException;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * A registry server that stops answering without closing anything (its process stopped with
 * SIGSTOP: the kernel still takes connections and bytes, nothing answers), unlike one whose
 * process ends or whose ports close: a watch whose stream is on it notices by its unanswered
 * ping, moves to the other registry server of its list, and hears the next bind there.
 */
class HungRegistryTest {
    private static final String SECRET = "hung-secret";

    @TempDir
    Path dir;

    @Test
    void aWatchOnARegistryThatHangsMovesToTheOtherAndHearsTheNextBind() throws Exception {
        List<RegistryClient> clients = new ArrayList<>();
        try (ScratchZooKeeper zookeeper = ScratchZooKeeper.started(200);
             ChildJvm hung = registry(zookeeper, "a");
             ChildJvm other = registry(zookeeper, "b")) {
            String hungUrl = hung.await("registry ").trim();
            String otherUrl = other.await("registry ").trim();
            String hungStream = streamOf(hungUrl, clients);
            // reads and watches start at a registry of the client's own, picked at random: take a
            // client whose watch goes to the registry that will hang
            RegistryClient watching = null;
            for (int i = 0; i < 64 && watching == null; i++) {
                RegistryClient c = RegistryClient.connect(List.of(hungUrl, otherUrl), null, ClientSettings.defaults());
                clients.add(c);
                if (hungStream.equals(c.streamAddress())) {
                    watching = c;
                }
            }
            assertTrue(watching != null, "no client of 64 watches through " + hungUrl);
            CountDownLatch first = new CountDownLatch(1);
            CountDownLatch second = new CountDownLatch(1);
            try (RegistryClient writer = RegistryClient.connect(otherUrl, SECRET);
                 RegistryWatch watch = RegistryWatch.start(watching, List.of("Hung"), e -> {
                     if (e.kind() == RegistryEvent.Kind.APPEAR) {
                         (e.instanceId().equals("first") ? first : second).countDown();
                     }
                 })) {
                writer.bind(entry("first"));
                assertTrue(first.await(60, TimeUnit.SECONDS), "the watch saw the first bind");

                signal("STOP", hung.process());
                long stopped = System.nanoTime();
                writer.bind(entry("second"));

                // the stream's unanswered ping ends it within 15 s, then the registry that hung is asked
                // first again, for at most a watch answer's 5 s; with a whole call timeout (30 s)
                // there, the bind was heard after 45 s
                assertTrue(second.await(35, TimeUnit.SECONDS), "the watch moved off the hung registry and heard the bind");
                long heardMillis = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - stopped);
                System.out.println("a watch on a hung registry heard the next bind after " + heardMillis + " ms");
            } finally {
                signal("CONT", hung.process());   // so that it ends with the test
            }
        } finally {
            clients.forEach(RegistryClient::close);
        }
    }

    private ChildJvm registry(ScratchZooKeeper zookeeper, String name) throws IOException {
        return ChildJvm.start(dir.resolve(name + ".err"), ZooKeeperRegistryMain.class, zookeeper.getConnectString(),
                "/hung", SECRET);
    }

    private static String streamOf(String url, List<RegistryClient> clients) {
        RegistryClient alone = RegistryClient.connect(url);
        clients.add(alone);
        return alone.streamAddress();
    }

    private static ComponentEntry entry(String instance) {
        return new ComponentEntry("Hung", instance, List.of(new Endpoint("soap", "http://127.0.0.1:9/axis2/services/Hung")),
                ConformanceComponent.DESCRIPTOR.schema(), null, null);
    }

    private static void signal(String signal, Process process) throws IOException, InterruptedException {
        Process kill = new ProcessBuilder("kill", "-" + signal, Long.toString(process.pid())).inheritIO().start();
        assertEquals(0, kill.waitFor(), "kill -" + signal);
    }
}
