package io.switchboard.registry.file;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

import io.switchboard.registry.store.RegistryStore;
import io.switchboard.registry.store.RegistryStores;
import java.nio.file.Path;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class FileStoreProviderTest {
    @TempDir
    Path dir;

    @Test
    void theFileSchemeOpensAFileStoreByName() throws Exception {
        try (RegistryStore file = RegistryStores.open("file:" + dir.resolve("r.json"))) {
            assertEquals(dir.resolve("r.json"), ((FileRegistryStore) file).file());
        }
        assertThrows(IllegalArgumentException.class, () -> RegistryStores.open("file:"));
    }

    @Test
    void aPathMayStartAtTheUsersHome() {
        assertEquals(Path.of(System.getProperty("user.home"), ".switchboard/registry.json"),
                FileStoreProvider.expandHome("~/.switchboard/registry.json"));
        assertEquals(Path.of("/var/r.json"), FileStoreProvider.expandHome("/var/r.json"));
    }
}
