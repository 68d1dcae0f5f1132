package io.switchboard.registry;

import java.nio.file.Path;

/**
 * Opens a {@link RegistryStore} from its short form, as the command line takes it:
 *
 * <pre>{@code
 * RegistryStores.open("memory");                                        // InMemoryRegistryStore
 * RegistryStores.open("file:~/.switchboard/registry.json");             // FileRegistryStore
 * RegistryStores.open("zookeeper://zk1:2181,zk2:2181,zk3:2181/switchboard"); // ZooKeeperRegistryStore
 * }</pre>
 *
 * A {@code file:} path may start with {@code ~/} for the user's home; a ZooKeeper address without a
 * root uses {@code /switchboard}.
 */
public final class RegistryStores {
    /** What the standalone registry uses unless told otherwise. */
    public static final String DEFAULT = "file:~/.switchboard/registry.json";

    private RegistryStores() {
    }

    /**
     * @throws IllegalArgumentException the form is not one of the above
     * @throws RegistryStore.StoreException the store cannot be opened (message names the file or ensemble)
     */
    public static RegistryStore open(String spec) {
        if (spec.equals("memory")) {
            return new InMemoryRegistryStore();
        }
        if (spec.startsWith("file:")) {
            String path = spec.substring("file:".length());
            if (path.isEmpty()) {
                throw new IllegalArgumentException("file: needs a path, as in file:/var/lib/switchboard/registry.json");
            }
            return FileRegistryStore.open(expandHome(path));
        }
        if (spec.startsWith("zookeeper://")) {
            String rest = spec.substring("zookeeper://".length());
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
        throw new IllegalArgumentException("unknown store '" + spec + "': use memory, file:PATH or "
                + "zookeeper://HOST:PORT[,HOST:PORT...]/ROOT");
    }

    static Path expandHome(String path) {
        if (path.equals("~") || path.startsWith("~/")) {
            return Path.of(System.getProperty("user.home"), path.substring(1).replaceFirst("^/", ""));
        }
        return Path.of(path);
    }
}
