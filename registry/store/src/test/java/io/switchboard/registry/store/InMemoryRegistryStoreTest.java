package io.switchboard.registry.store;

import static org.junit.jupiter.api.Assertions.assertEquals;

import io.switchboard.protocol.Endpoint;
import io.switchboard.registry.ComponentEntry;
import java.util.List;
import org.junit.jupiter.api.Test;

/** The memory store's list order and count. */
class InMemoryRegistryStoreTest {
    private static ComponentEntry entry(String name, String instance) {
        return new ComponentEntry(name, instance, List.of(new Endpoint("soap", "http://127.0.0.1:4000/axis2/services/"
                + name)), null, null, null, null, List.of(), 0);
    }

    @Test
    void listIsByNameThenAgeAndSizeCountsWhatItLists() throws Exception {
        InMemoryRegistryStore store = new InMemoryRegistryStore();
        store.bind(entry("Zeta", "z1"));
        store.bind(entry("Alpha", "a2"));
        store.bind(entry("Alpha", "a1"));
        store.bind(entry("Mid", "m1"));
        assertEquals(List.of("Alpha/a2", "Alpha/a1", "Mid/m1", "Zeta/z1"),
                store.list().stream().map(e -> e.name() + "/" + e.instanceId()).toList());
        assertEquals(4, store.size());
        store.unbind("Alpha", null);
        store.unbind("Mid", "m1");
        assertEquals(1, store.size());
        assertEquals(store.list().size(), store.size());
    }
}
