package io.switchboard.registry.multihost;

import io.switchboard.registry.server.RegistryServer;
import io.switchboard.registry.zookeeper.ZooKeeperRegistryStore;
import java.time.Duration;

/**
 * A registry host of {@link MultiHostTest}: a registry on every address of its host ({@code
 * --bind 0.0.0.0}, so it publishes the host's own address) over the ZooKeeper ensemble {@code
 * args[0]}, with the shared secret {@code args[1]} and the ZooKeeper session timeout {@code
 * args[2]} (ms). Prints "registry URL" once it is connected and serves until killed.
 */
public final class MultiHostRegistryMain {
    private MultiHostRegistryMain() {
    }

    public static void main(String[] args) throws Exception {
        // the ensemble may still be electing its leader when this starts: wait for it rather than fail
        ZooKeeperRegistryStore store = ZooKeeperRegistryStore.builder(args[0])
                .sessionTimeout(Duration.ofMillis(Long.parseLong(args[2])))
                .connectionTimeout(Duration.ofSeconds(60)).start();
        RegistryServer server = RegistryServer.builder().store(store).secret(args[1]).bindAddress("0.0.0.0").start();
        System.out.println("registry " + server.endpoint());
        System.out.flush();
        Thread.sleep(Long.MAX_VALUE);
    }
}
