package io.switchboard.registry.server;

import io.switchboard.registry.Entries;
import io.switchboard.registry.store.InMemoryRegistryStore;
import io.switchboard.registry.ComponentEntry;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

import io.switchboard.protocol.Endpoint;
import io.switchboard.registry.wire.BindFaultException;
import java.time.Clock;
import java.util.List;
import org.junit.jupiter.api.Test;

/**
 * A registry entry may list a {@code local} endpoint (it names a JVM, not a host and port: only
 * clients in that JVM use it); any other endpoint still needs a host and a port, and a "local"
 * endpoint must have the local form.
 */
class LocalEndpointEntryTest {
    private static ComponentEntry entry(String instance, Endpoint extra) {
        return new ComponentEntry("Echo", instance, List.of(extra,
                new Endpoint("soap", "http://127.0.0.1:1/axis2/services/Echo")), null, null, null, null, List.of(), 0);
    }

    @Test
    void localEndpointIsKeptOthersNeedHostAndPort() throws Exception {
        RegistryService registry = new RegistryService(new InMemoryRegistryStore(), null, Clock.systemUTC());
        // a jvm id that starts with a digit is no host name: the URI has an authority but no host
        Endpoint local = new Endpoint("local", "local://0f3c2a1e-7d4b-4c55-9e0a-3b2f1d6c8a90/s1/Echo");
        registry.bind(Entries.toWire(entry("i1", local)), null);
        assertEquals(local, Entries.fromWire(registry.lookup("Echo").get(0)).endpoint("local").orElseThrow());

        assertThrows(BindFaultException.class, () -> registry.bind(Entries.toWire(
                entry("i2", new Endpoint("local", "http://127.0.0.1:1/x"))), null), "local in another form");
        assertThrows(BindFaultException.class, () -> registry.bind(Entries.toWire(
                entry("i3", new Endpoint("local", "local:/no-authority"))), null), "local without a JVM id");
        assertThrows(BindFaultException.class, () -> registry.bind(Entries.toWire(
                entry("i4", new Endpoint("grpc", "grpc:/no-host"))), null), "grpc without host and port");
        assertEquals(1, registry.lookup("Echo").size());
    }
}
