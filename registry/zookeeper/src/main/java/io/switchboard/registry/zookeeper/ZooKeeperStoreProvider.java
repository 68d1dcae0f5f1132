package io.switchboard.registry.zookeeper;

import io.switchboard.registry.store.RegistryStore;
import io.switchboard.registry.store.RegistryStoreProvider;

/**
 * {@code zookeeper://HOST:PORT[,HOST:PORT...]/ROOT}: entries in a ZooKeeper ensemble that several
 * registry servers share (root {@code /switchboard} when none is given).
 */
public final class ZooKeeperStoreProvider implements RegistryStoreProvider {
    @Override
    public String name() {
        return "zookeeper";
    }

    @Override
    public String usage() {
        return "zookeeper://HOST:PORT[,HOST:PORT...]/ROOT";
    }

    @Override
    public RegistryStore open(String argument) {
        if (argument == null || !argument.startsWith("//")) {
            throw new IllegalArgumentException("a ZooKeeper store is " + usage() + ", as in zookeeper://"
                    + "zk1:2181,zk2:2181/switchboard");
        }
        String rest = argument.substring(2);
        int slash = rest.indexOf('/');
        String ensemble = slash < 0 ? rest : rest.substring(0, slash);
        if (ensemble.isEmpty()) {
            throw new IllegalArgumentException("zookeeper:// needs HOST:PORT[,HOST:PORT...], as in zookeeper://"
                    + "zk1:2181,zk2:2181/switchboard");
        }
        ZooKeeperRegistryStore.Builder b = ZooKeeperRegistryStore.builder(ensemble);
        if (slash >= 0 && slash < rest.length() - 1) {
            b.root(rest.substring(slash));
        }
        return b.start();
    }
}
