package io.switchboard.spring.boot;

import io.switchboard.client.Switchboard;
import io.switchboard.registry.ComponentEntry;
import java.util.ArrayList;
import java.util.List;
import org.springframework.beans.factory.ObjectProvider;
import org.springframework.boot.actuate.health.AbstractHealthIndicator;
import org.springframework.boot.actuate.health.Health;

/**
 * {@code switchboard} in the actuator's health: DOWN while draining, DOWN when the registry does
 * not answer or no longer holds one of this application's entries (the heartbeat binds it again),
 * UP otherwise, with the names served and the registry's URL as details.
 *
 * <pre>{@code
 * GET /actuator/health/switchboard
 * {"status":"UP","details":{"registry":"http://...","bound":["Echo"]}}
 * }</pre>
 */
public class SwitchboardHealthIndicator extends AbstractHealthIndicator {
    private final Switchboard switchboard;
    private final ObjectProvider<SwitchboardServerLifecycle> server;

    public SwitchboardHealthIndicator(Switchboard switchboard, ObjectProvider<SwitchboardServerLifecycle> server) {
        super("switchboard health check failed");
        this.switchboard = switchboard;
        this.server = server;
    }

    @Override
    protected void doHealthCheck(Health.Builder health) {
        health.withDetail("registry", switchboard.registry().url());
        SwitchboardServerLifecycle lifecycle = server.getIfAvailable();
        if (lifecycle != null && lifecycle.draining()) {
            health.down().withDetail("draining", true);
            return;
        }
        List<ComponentEntry> served = lifecycle == null ? List.of() : lifecycle.components();
        List<String> bound = new ArrayList<>();
        List<String> missing = new ArrayList<>();
        for (ComponentEntry entry : served) {
            boolean found = switchboard.registry().lookup(entry.name()).stream()
                    .anyMatch(e -> e.instanceId().equals(entry.instanceId()));
            (found ? bound : missing).add(entry.name());
        }
        if (served.isEmpty()) {
            switchboard.registry().lookup("switchboard.health");   // a read: throws when the registry is unreachable
        }
        health.withDetail("bound", bound);
        if (missing.isEmpty()) {
            health.up();
        } else {
            health.down().withDetail("notBound", missing);
        }
    }
}
