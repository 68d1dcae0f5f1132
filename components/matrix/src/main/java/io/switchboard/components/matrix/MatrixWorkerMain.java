package io.switchboard.components.matrix;

import io.switchboard.protocol.Endpoint;
import io.switchboard.registry.ComponentEntry;
import io.switchboard.server.ComponentServer;
import java.util.concurrent.CountDownLatch;

/**
 * One matrix worker in a process of its own: exports the worker on every protocol on the class
 * path, binds it in the registry under the given name, prints {@code READY name} and its endpoints,
 * and serves until its {@code shutdown} operation is called or the process is stopped; either way
 * it unbinds first.
 *
 * <pre>{@code
 * java -cp CLASSPATH io.switchboard.components.matrix.MatrixWorkerMain \
 *     http://127.0.0.1:8081/axis2/services/Registry matrix-worker-0 [SECRET]
 * }</pre>
 * ({@code ./switchboard serve matrix-worker --name matrix-worker-0 --registry URL} does the same
 * from the command line.)
 */
public final class MatrixWorkerMain {
    private MatrixWorkerMain() {
    }

    public static void main(String[] args) throws InterruptedException {
        if (args.length < 2 || args.length > 3) {
            System.err.println("usage: MatrixWorkerMain REGISTRY_URL NAME [SECRET]");
            System.exit(2);
        }
        serve(args[0], args[1], args.length == 3 ? args[2] : System.getenv("SWITCHBOARD_SECRET"), "");
    }

    /**
     * What {@link #main} does, for a program that serves more beside the worker in the same process:
     * its ready line is {@code READY name} followed by {@code readySuffix}. It does not return: it
     * ends the process once the worker is stopped.
     */
    public static void serve(String registry, String name, String secret, String readySuffix) throws InterruptedException {
        CountDownLatch stop = new CountDownLatch(1);
        MatrixWorkerService worker = new MatrixWorkerService(registry, stop::countDown);
        ComponentServer server = ComponentServer.builder().registry(registry, secret).build();
        Thread hook = new Thread(() -> {
            server.close();
            worker.close();
        }, "matrix-worker-stop");
        Runtime.getRuntime().addShutdownHook(hook);
        ComponentEntry entry = server.export(name, MatrixWorkerComponent.skeleton(worker));
        System.out.println("READY " + entry.name() + readySuffix);
        for (Endpoint e : entry.endpoints()) {
            System.out.println("  " + e.protocol() + " " + e.address());
        }
        System.out.flush();
        stop.await();
        // stopped through the shutdown operation: unbind and close here, then leave
        Runtime.getRuntime().removeShutdownHook(hook);
        server.close();
        worker.close();
        System.exit(0);
    }
}
