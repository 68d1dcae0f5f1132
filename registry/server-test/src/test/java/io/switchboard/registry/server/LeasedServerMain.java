package io.switchboard.registry.server;

import io.switchboard.registry.ComponentEntry;
import io.switchboard.server.ComponentServer;
import io.switchboard.testing.conformance.ConformanceComponent;
import io.switchboard.testing.conformance.ConformanceImpl;
import java.time.Duration;

/**
 * Run in a child JVM by {@link LeaseTest}: exports the conformance component in the registry named
 * by {@code args[0]} (secret {@code args[1]}) with a lease of {@code args[2]} seconds, prints
 * "bound INSTANCE", and serves until killed.
 */
public final class LeasedServerMain {
    private LeasedServerMain() {
    }

    public static void main(String[] args) throws Exception {
        ComponentServer server = ComponentServer.builder().protocols("soap").registry(args[0], args[1])
                .lease(Duration.ofSeconds(Long.parseLong(args[2]))).build();
        ComponentEntry e = server.export(ConformanceComponent.skeleton(new ConformanceImpl()));
        System.out.println("bound " + e.instanceId());
        System.out.flush();
        Thread.sleep(Long.MAX_VALUE);
    }
}
