package io.switchboard.registry.zookeeper;

import io.switchboard.registry.server.RegistryServer;
import java.time.Duration;

/**
 * Run in a child JVM by {@link ZooKeeperRegistryStoreTest}: a registry server on the ZooKeeper
 * store ({@code args}: ensemble, root, session timeout in ms), which prints "registry URL" and
 * serves until killed.
 */
public final class ZooKeeperRegistryMain {
    private ZooKeeperRegistryMain() {
    }

    public static void main(String[] args) throws Exception {
        ZooKeeperRegistryStore store = ZooKeeperRegistryStore.builder(args[0]).root(args[1])
                .sessionTimeout(Duration.ofMillis(Long.parseLong(args[2]))).start();
        RegistryServer server = RegistryServer.builder().store(store).secret("s").start();
        System.out.println("registry " + server.endpoint());
        System.out.flush();
        Thread.sleep(Long.MAX_VALUE);
    }
}
