package io.switchboard.examples.greeter;

import io.switchboard.registry.ComponentEntry;
import io.switchboard.server.ComponentServer;
import java.util.concurrent.CountDownLatch;

/**
 * Serves Greeter over SOAP and gRPC and binds it in a registry until the process is stopped (Ctrl-C):
 * the component's side of a deployment, in a few lines.
 *
 * <pre>{@code
 * switchboard registry --store memory &          # prints the registry's URL
 * java -cp "target/greeter-1.0-SNAPSHOT.jar:$(cat target/classpath.txt)" \
 *     io.switchboard.examples.greeter.GreeterServer http://127.0.0.1:8081/axis2/services/Registry
 * }</pre>
 */
public final class GreeterServer {
    private GreeterServer() {
    }

    public static void main(String[] args) throws InterruptedException {
        if (args.length < 1) {
            System.err.println("usage: GreeterServer REGISTRY_URL [SHARED_SECRET]");
            System.exit(2);
        }
        CountDownLatch stopped = new CountDownLatch(1);
        try (ComponentServer server = start(args[0], args.length > 1 ? args[1] : null)) {
            // SIGTERM and Ctrl-C: close the server (it unbinds Greeter first), then let the JVM end
            Runtime.getRuntime().addShutdownHook(new Thread(() -> {
                server.close();
                stopped.countDown();
            }));
            stopped.await();
        }
    }

    /** A server bound to the registry at {@code registryUrl} with Greeter exported on it. */
    static ComponentServer start(String registryUrl, String sharedSecret) {
        ComponentServer server = ComponentServer.builder().registry(registryUrl, sharedSecret).build();
        ComponentEntry entry = server.export(GreeterComponent.skeleton(new GreeterService()));
        System.out.println("serving Greeter at " + entry.endpoints());
        return server;
    }
}
