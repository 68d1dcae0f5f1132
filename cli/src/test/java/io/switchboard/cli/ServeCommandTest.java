package io.switchboard.cli;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.switchboard.client.Switchboard;
import io.switchboard.components.matrix.MatrixWorker;
import io.switchboard.components.matrix.MatrixWorkerComponent;
import io.switchboard.registry.ComponentEntry;
import io.switchboard.registry.RegistryClient;
import io.switchboard.registry.RegistryEvent;
import io.switchboard.registry.RegistryWatch;
import io.switchboard.registry.server.RegistryServer;
import io.switchboard.server.ComponentContext;
import io.switchboard.server.ComponentProvider;
import io.switchboard.server.ComponentProviders;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

/**
 * {@code serve} finds components through the providers the interface compiler generates: the
 * bundled ones under their old command-line names, with no list to keep.
 */
class ServeCommandTest {
    @Test
    void theBundledComponentsAreFoundOnTheClassPathUnderTheirOldNames() {
        Map<String, String> componentByOldName = Map.of("echo", "Echo", "matrix-worker", "MatrixWorker",
                "simulator", "Simulator", "optimizer", "Optimizer");
        componentByOldName.forEach((old, component) -> {
            ComponentProvider provider = ComponentProviders.find(old);
            assertEquals(component, provider.name(), old);
            assertEquals(component, provider.create(ComponentContext.standalone()).descriptor().name(), old);
        });
        assertEquals(List.of("Echo", "MatrixWorker", "Optimizer", "Simulator"),
                List.copyOf(ComponentProviders.all().keySet()), "progress is a callback: no provider");
    }

    @Test
    void anUnknownNameOrAMissingJarIsRefusedSayingWhatWasFound() {
        String nowhere = "http://127.0.0.1:1/axis2/services/Registry";
        String unknown = CommandOutput.stderr(1, "serve", "Stats", "--registry", nowhere);
        assertTrue(unknown.contains("no component named 'Stats'")
                && unknown.contains("Echo, MatrixWorker, Optimizer, Simulator"), unknown);
        String missing = CommandOutput.stderr(1, "serve", "Stats", "--classpath", "/nonexistent/stats.jar",
                "--registry", nowhere);
        assertTrue(missing.contains("--classpath: no such file or directory: /nonexistent/stats.jar"), missing);
    }

    /**
     * The component context's stop action ends the command, which unbinds the worker on its way out;
     * the endpoints it published carry the advertised host.
     */
    @Test
    void aMatrixWorkersShutdownOperationEndsServeAndUnbindsIt() throws Exception {
        ExecutorService serving = Executors.newSingleThreadExecutor();
        try (RegistryServer registry = RegistryServer.builder().start();
             RegistryClient reader = RegistryClient.connect(registry.endpoint());
             Switchboard sb = Switchboard.connect(registry.endpoint())) {
            CountDownLatch appeared = new CountDownLatch(1);
            CountDownLatch gone = new CountDownLatch(1);
            List<ComponentEntry> bound = new CopyOnWriteArrayList<>();
            try (RegistryWatch watch = RegistryWatch.start(reader, List.of("worker-under-test"), e -> {
                if (e.kind() == RegistryEvent.Kind.APPEAR) {
                    bound.add(e.entry());
                }
                (e.kind() == RegistryEvent.Kind.APPEAR ? appeared : gone).countDown();
            })) {
                Future<Integer> exit = serving.submit(() -> Main.run("serve", "matrix-worker", "--name",
                        "worker-under-test", "--advertise", "localhost", "--registry", registry.endpoint()));
                assertTrue(appeared.await(30, TimeUnit.SECONDS), "serve bound the worker");
                String soap = bound.get(0).endpoints().stream().filter(e -> e.protocol().equals("soap")).findFirst()
                        .orElseThrow().address();
                assertTrue(soap.startsWith("http://localhost:"), soap);
                MatrixWorker worker = sb.lookup("worker-under-test", MatrixWorkerComponent.DESCRIPTOR,
                        MatrixWorkerComponent::stub);
                assertTrue(worker.shutdown(), "a worker served from the class path may stop its host");
                assertEquals(0, exit.get(30, TimeUnit.SECONDS));
                assertTrue(gone.await(30, TimeUnit.SECONDS), "serve unbound the worker before it returned");
            }
        } finally {
            serving.shutdownNow();
        }
    }
}
