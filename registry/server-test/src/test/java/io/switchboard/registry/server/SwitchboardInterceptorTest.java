package io.switchboard.registry.server;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.switchboard.client.Switchboard;
import io.switchboard.metastub.ClientInterceptor;
import io.switchboard.registry.RegistryClient;
import io.switchboard.server.ComponentServer;
import io.switchboard.testing.conformance.ConformanceComponent;
import io.switchboard.testing.conformance.ConformanceImpl;
import io.switchboard.testing.conformance.ConformanceStub;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import org.junit.jupiter.api.Test;

/** An interceptor given to Switchboard's builder runs in the meta-stubs behind what lookup returns. */
class SwitchboardInterceptorTest {
    @Test
    void anInterceptorOnTheBuilderSeesEveryCallOfEveryStub() throws Exception {
        List<String> seen = new CopyOnWriteArrayList<>();
        List<Thread> threads = new CopyOnWriteArrayList<>();
        ClientInterceptor tracer = (call, next) -> {
            seen.add(call.operation().name() + " over " + call.protocol() + " id " + call.options().callId());
            threads.add(Thread.currentThread());
            return next.proceed(call);
        };
        try (RegistryServer registry = RegistryServer.builder().start();
             RegistryClient writer = RegistryClient.connect(registry.endpoint());
             ComponentServer server = ComponentServer.builder().build()) {
            writer.bind(server.export(ConformanceComponent.skeleton(new ConformanceImpl())));
            try (Switchboard sb = Switchboard.builder(registry.endpoint()).interceptor(tracer).connect()) {
                ConformanceStub stub = sb.lookup(ConformanceComponent.DESCRIPTOR, ConformanceComponent::stub);
                assertEquals(3, stub.increment(3));
                stub.ping();
            }
        }
        assertEquals(2, seen.size(), seen.toString());
        assertTrue(seen.get(0).startsWith("increment over "), seen.get(0));
        assertFalse(seen.get(0).endsWith("id null"), "the call id is given before user interceptors run");
        assertSame(Thread.currentThread(), threads.get(0), "a blocking call stays on the caller's thread");
    }
}
