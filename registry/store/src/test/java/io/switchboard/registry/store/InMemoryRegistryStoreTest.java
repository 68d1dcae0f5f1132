package io.switchboard.registry.store;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;

import io.switchboard.protocol.Endpoint;
import io.switchboard.registry.ComponentEntry;
import java.util.List;
import org.junit.jupiter.api.Test;

/** The memory store's list order and count, and lookups that follow every write. */
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

    @Test
    void aLookupIsTheLastOneUntilTheNameIsWrittenAndFollowsEveryWrite() throws Exception {
        InMemoryRegistryStore store = new InMemoryRegistryStore();
        store.bind(entry("Echo", "e1"));
        store.bind(entry("Other", "o1"));
        List<ComponentEntry> first = store.lookup("Echo");
        assertSame(first, store.lookup("Echo"), "nothing written: the same list");
        assertThrows(UnsupportedOperationException.class, () -> first.add(entry("Echo", "forged")));
        store.bind(entry("Other", "o2"));
        assertSame(first, store.lookup("Echo"), "a write to another name leaves this one's");

        store.bind(entry("Echo", "e2"));
        assertEquals(List.of("e1", "e2"), ids(store.lookup("Echo")));
        ComponentEntry moved = new ComponentEntry("Echo", "e1", List.of(new Endpoint("soap",
                "http://127.0.0.1:4001/axis2/services/Echo")), null, null, null, null, List.of(), 0);
        store.rebind(moved);
        assertSame(moved, store.lookup("Echo").get(0), "a rebind shows at once");
        store.unbind("Echo", "e2");
        assertEquals(List.of("e1"), ids(store.lookup("Echo")));
        store.unbind("Echo", null);
        assertEquals(List.of(), store.lookup("Echo"));
        store.bind(entry("Echo", "e3"));
        assertEquals(List.of("e3"), ids(store.lookup("Echo")), "bound again after every instance went");
        assertEquals(List.of("e1"), ids(first), "a list handed out before is as it was");
    }

    private static List<String> ids(List<ComponentEntry> entries) {
        return entries.stream().map(ComponentEntry::instanceId).toList();
    }
}
