package io.switchboard.registry.server;

import io.switchboard.client.ReplicatedChannel;
import io.switchboard.server.ComponentServer;
import io.switchboard.client.Switchboard;
import io.switchboard.registry.RegistryClient;
import static org.junit.jupiter.api.Assertions.assertEquals;

import io.switchboard.testing.conformance.ConformanceComponent;
import io.switchboard.testing.conformance.ConformanceStub;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;

/**
 * The non-blocking form through a {@link ReplicatedChannel} (what {@code Switchboard.lookup}
 * returns): async calls move off a replica that is gone, as blocking ones do, and each runs once.
 */
class AsyncReplicasTest {
    @Test
    void asyncCallsMoveOffADeadReplicaAndRunOnce() throws Exception {
        Map<Integer, AtomicInteger> runs = new ConcurrentHashMap<>();
        ReplicasTest.CountingImpl live = new ReplicasTest.CountingImpl(runs);
        try (RegistryServer registry = RegistryServer.builder().start();
             RegistryClient writer = RegistryClient.connect(registry.endpoint());
             ComponentServer dead = ComponentServer.builder().build();
             ComponentServer alive = ComponentServer.builder().build()) {
            writer.bind(dead.export(ConformanceComponent.skeleton(new ReplicasTest.CountingImpl(runs))));
            writer.bind(alive.export(ConformanceComponent.skeleton(live)));
            dead.close();   // crashed: its entry stays in the registry
            try (Switchboard sb = Switchboard.connect(registry.endpoint())) {
                ReplicatedChannel channel = sb.replicas("Conformance", ConformanceComponent.DESCRIPTOR);
                assertEquals(2, channel.entries().size());
                ConformanceStub c = ConformanceComponent.stub(channel);
                List<CompletableFuture<Long>> calls = new ArrayList<>();
                for (int by = 1; by <= 40; by++) {
                    calls.add(c.incrementAsync(by));
                }
                CompletableFuture.allOf(calls.toArray(CompletableFuture[]::new)).get(2, TimeUnit.MINUTES);
            }
        }
        for (int by = 1; by <= 40; by++) {
            assertEquals(1, runs.get(by).get(), "call " + by + " ran exactly once");
        }
        assertEquals(40, live.increments.get(), "every call ran on the live replica");
    }
}
