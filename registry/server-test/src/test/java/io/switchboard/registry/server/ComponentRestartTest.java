package io.switchboard.registry.server;

import io.switchboard.registry.ComponentEntry;
import io.switchboard.server.ComponentServer;
import io.switchboard.client.Switchboard;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.switchboard.idl.runtime.DeclaredFault;
import io.switchboard.idl.runtime.OperationDescriptor;
import io.switchboard.idl.runtime.ServiceDescriptor;
import io.switchboard.protocol.Skeleton;
import io.switchboard.protocol.TransportException;
import io.switchboard.testing.conformance.Conformance;
import io.switchboard.testing.conformance.ConformanceComponent;
import io.switchboard.testing.conformance.ConformanceImpl;
import io.switchboard.testing.conformance.Increment;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;

/**
 * A component restarted on new ports while four clients keep calling a non-idempotent operation
 * through stubs that follow the registry's watch. Every call carries a unique argument and the
 * servers record which arguments they ran, so the test can tell exactly: every call that returned
 * ran once (none lost), no call ran twice, and a call that failed says whether it may have run.
 */
class ComponentRestartTest {
    private static final int CLIENTS = 4;

    /** Records each executed {@code increment}'s argument, then runs it. */
    private record Recording(Skeleton inner, String server, Map<Integer, List<String>> ran) implements Skeleton {
        @Override
        public ServiceDescriptor descriptor() {
            return inner.descriptor();
        }

        @Override
        public Object invoke(OperationDescriptor op, Object request) throws DeclaredFault {
            return invoke(op, request, null);
        }

        @Override
        public Object invoke(OperationDescriptor op, Object request, String callId) throws DeclaredFault {
            if (request instanceof Increment inc) {
                ran.computeIfAbsent(inc.getBy(), k -> java.util.Collections.synchronizedList(new ArrayList<>()))
                        .add(server);
            }
            return inner.invoke(op, request, callId);
        }
    }

    @Test
    void callsInFlightAcrossARestartOnNewPortsAreNeitherLostNorRunTwice() throws Exception {
        Map<Integer, List<String>> ran = new ConcurrentHashMap<>();
        Map<Integer, String> outcome = new ConcurrentHashMap<>();
        AtomicBoolean stop = new AtomicBoolean();
        ConformanceImpl impl = new ConformanceImpl();
        try (RegistryServer registry = RegistryServer.builder().sweepInterval(Duration.ofMillis(100)).start();
             Switchboard client = Switchboard.connect(registry.endpoint())) {
            ComponentServer first = ComponentServer.builder().registry(registry.endpoint(), null).build();
            ComponentEntry firstEntry = first.export(new Recording(ConformanceComponent.skeleton(impl), "first", ran));
            Conformance stub = client.lookup(ConformanceComponent.DESCRIPTOR, ConformanceComponent::stub);
            List<Thread> threads = new ArrayList<>();
            AtomicInteger afterRestart = new AtomicInteger();
            AtomicBoolean restarted = new AtomicBoolean();
            for (int t = 0; t < CLIENTS; t++) {
                int base = (t + 1) * 1_000_000;
                Thread thread = new Thread(() -> {
                    for (int seq = 0; !stop.get(); seq++) {
                        int by = base + seq;
                        try {
                            stub.increment(by);
                            outcome.put(by, "ok");
                            if (restarted.get()) {
                                afterRestart.incrementAndGet();
                            }
                        } catch (TransportException e) {
                            outcome.put(by, e.delivery().name());
                        } catch (RuntimeException e) {
                            outcome.put(by, "error: " + e);
                        }
                    }
                }, "restart-client-" + t);
                threads.add(thread);
                thread.start();
            }
            long running = System.nanoTime() + Duration.ofSeconds(20).toNanos();
            while (ran.size() < 100) {   // the clients are under way on the first server
                assertTrue(System.nanoTime() < running, "the first server ran " + ran.size() + " calls in 20 s");
                Thread.sleep(10);   // polling the count of calls the first server ran
            }
            first.close();   // unbinds, then stops its listeners: calls in flight meet the stop
            ComponentEntry secondEntry;
            try (ComponentServer second = ComponentServer.builder().registry(registry.endpoint(), null).build()) {
                secondEntry = second.export(new Recording(ConformanceComponent.skeleton(impl), "second", ran));
                restarted.set(true);
                long end = System.nanoTime() + Duration.ofSeconds(20).toNanos();
                while (afterRestart.get() < 50 && System.nanoTime() < end) {
                    Thread.sleep(50);
                }
                stop.set(true);
                for (Thread t : threads) {
                    t.join(30_000);
                }
            }
            assertNotEquals(firstEntry.endpoints(), secondEntry.endpoints(), "the restart moved to new ports");

            long ok = outcome.values().stream().filter("ok"::equals).count();
            long failedNotRun = outcome.values().stream().filter("NOT_RUN"::equals).count();
            long failedMayHaveRun = outcome.values().stream().filter("MAY_HAVE_RUN"::equals).count();
            List<String> otherErrors = outcome.values().stream().filter(o -> o.startsWith("error")).toList();
            long lost = outcome.entrySet().stream().filter(e -> e.getValue().equals("ok") && !ran.containsKey(e.getKey()))
                    .count();
            long twice = ran.values().stream().filter(servers -> servers.size() > 1).count();
            long ranAfterFailure = outcome.entrySet().stream()
                    .filter(e -> !e.getValue().equals("ok") && ran.containsKey(e.getKey())).count();
            long notRunButRan = outcome.entrySet().stream()
                    .filter(e -> e.getValue().equals("NOT_RUN") && ran.containsKey(e.getKey())).count();
            long onFirst = ran.values().stream().filter(s -> s.contains("first")).count();
            long onSecond = ran.values().stream().filter(s -> s.contains("second")).count();
            System.out.printf("restart on new ports: %d calls, %d ok, %d failed not run, %d failed may have run"
                            + " (%d of them ran), other errors %s; executions: %d on the first server, %d on the second;"
                            + " lost %d, run twice %d%n", outcome.size(), ok, failedNotRun, failedMayHaveRun,
                    ranAfterFailure, otherErrors, onFirst, onSecond, lost, twice);

            assertTrue(otherErrors.isEmpty(), "failures are transport failures that say what happened: " + otherErrors);
            assertEquals(0, lost, "every call that returned ran");
            assertEquals(0, twice, "no call ran twice");
            assertEquals(0, notRunButRan, "a call said not to have run did not run");
            assertTrue(afterRestart.get() >= 50, "clients went on with the restarted server: " + afterRestart.get());
            assertTrue(onFirst > 0 && onSecond > 0, "both servers ran calls");
            assertEquals(ran.size(), impl.increments.get(), "the implementation ran once per recorded call");
        }
    }
}
