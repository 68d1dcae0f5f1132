package io.switchboard.registry.server;

import io.switchboard.registry.zookeeper.ZooKeeperRegistryStore;
import java.time.Duration;

/**
 * Run in a child JVM: a registry server on the ZooKeeper ensemble {@code args[0]} under the root
 * {@code args[1]}, with the shared secret {@code args[2]}; prints "registry URL" and serves until
 * killed.
 */
public final class ZooKeeperRegistryMain {
    private ZooKeeperRegistryMain() {
    }

    public static void main(String[] args) throws Exception {
        RegistryServer server = RegistryServer.builder().secret(args[2])
                .store(ZooKeeperRegistryStore.builder(args[0]).root(args[1]).sessionTimeout(Duration.ofSeconds(2))
                        .connectionTimeout(Duration.ofSeconds(5)).start())
                .start();
        System.out.println("registry " + server.endpoint());
        System.out.flush();
        Thread.sleep(Long.MAX_VALUE);
    }
}
