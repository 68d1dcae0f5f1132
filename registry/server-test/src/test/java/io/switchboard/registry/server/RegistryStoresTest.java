package io.switchboard.registry.server;

import io.switchboard.registry.store.InMemoryRegistryStore;
import io.switchboard.registry.zookeeper.ZooKeeperRegistryStore;
import io.switchboard.registry.file.FileRegistryStore;
import io.switchboard.registry.store.RegistryStore;
import io.switchboard.registry.store.RegistryStores;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.file.Path;
import org.apache.curator.test.TestingServer;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** The short forms the command line takes for a store. */
class RegistryStoresTest {
    @TempDir
    Path dir;

    @Test
    void eachFormOpensItsStore() throws Exception {
        assertInstanceOf(InMemoryRegistryStore.class, RegistryStores.open("memory"));
        try (RegistryStore file = RegistryStores.open("file:" + dir.resolve("r.json"))) {
            assertEquals(dir.resolve("r.json"), ((FileRegistryStore) file).file());
        }
        try (TestingServer zk = ScratchZooKeeper.started()) {
            String ensemble = zk.getConnectString() + "," + zk.getConnectString();
            try (RegistryStore a = RegistryStores.open("zookeeper://" + ensemble + "/teams/blue");
                 RegistryStore b = RegistryStores.open("zookeeper://" + ensemble)) {
                assertEquals("/teams/blue", ((ZooKeeperRegistryStore) a).root());
                assertEquals("/switchboard", ((ZooKeeperRegistryStore) b).root());
                assertTrue(a.shared());
            }
        }
    }

    @Test
    void badFormsAreRefusedWithTheFormsThatWork() {
        for (String bad : new String[] {"etcd://x", "file:", "zookeeper://", "zookeeper://h:1/bad path"}) {
            IllegalArgumentException e = assertThrows(IllegalArgumentException.class, () -> RegistryStores.open(bad));
            assertTrue(e.getMessage() != null && !e.getMessage().isBlank(), bad);
        }
    }
}
