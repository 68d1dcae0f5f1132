package io.switchboard.registry.store;

import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import org.junit.jupiter.api.Test;

class RegistryStoresTest {
    @Test
    void memoryIsBuiltIn() throws Exception {
        try (RegistryStore store = RegistryStores.open("memory")) {
            assertInstanceOf(InMemoryRegistryStore.class, store);
        }
        assertThrows(IllegalArgumentException.class, () -> RegistryStores.open("memory:extra"));
    }

    @Test
    void anUnknownSchemeNamesTheFormsOnTheClassPath() {
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class, () -> RegistryStores.open("etcd://x"));
        assertTrue(e.getMessage().contains("unknown store 'etcd://x'") && e.getMessage().contains("memory"),
                e.getMessage());
    }
}
