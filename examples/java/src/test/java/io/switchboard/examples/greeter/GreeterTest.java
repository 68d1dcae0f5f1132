package io.switchboard.examples.greeter;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.switchboard.registry.testing.RunningRegistry;
import io.switchboard.server.ComponentServer;
import org.junit.jupiter.api.Test;

/** The server and the client of this example meeting in a registry, as they would in production. */
class GreeterTest {
    @Test
    void theClientFindsTheServerThroughTheRegistry() {
        try (RunningRegistry registry = RunningRegistry.start();
             ComponentServer server = GreeterServer.start(registry.url(), RunningRegistry.SECRET)) {
            assertEquals("Hello, Ada!", GreeterClient.greet(registry.url(), "Ada"));
            assertEquals("Hello, stranger!", GreeterClient.greet(registry.url(), " "));
        }
    }

    @Test
    void averageOfNoValuesIsNaNNotAnError() {
        try (RunningRegistry registry = RunningRegistry.start();
             ComponentServer server = GreeterServer.start(registry.url(), RunningRegistry.SECRET);
             var sb = io.switchboard.client.Switchboard.connect(registry.url())) {
            GreeterStub greeter = sb.lookup(GreeterComponent.DESCRIPTOR, GreeterComponent::stub);
            assertEquals(2.0, greeter.average(new double[] {1.5, 2.5}));
            assertTrue(Double.isNaN(greeter.average(new double[0])));
            assertTrue(Double.isNaN(greeter.average(null)));
        }
    }

    @Test
    void aClientWithNoGreeterInItsRegistryIsToldSo() {
        try (RunningRegistry registry = RunningRegistry.start()) {
            assertThrows(RuntimeException.class, () -> GreeterClient.greet(registry.url(), "Ada"));
        }
    }
}
