package io.switchboard.registry.store;

import io.switchboard.protocol.spi.NamedProviders;
import java.util.stream.Collectors;

/**
 * Opens a {@link RegistryStore} from its short form, as the command line takes it, through the
 * {@link RegistryStoreProvider}s on the class path:
 *
 * <pre>{@code
 * RegistryStores.open("memory");                                        // InMemoryRegistryStore
 * RegistryStores.open("file:~/.switchboard/registry.json");             // FileRegistryStore
 * RegistryStores.open("zookeeper://zk1:2181,zk2:2181,zk3:2181/switchboard"); // with switchboard-registry-zookeeper
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
     * @throws IllegalArgumentException the form is not one a store on the class path takes
     * @throws RegistryStore.StoreException the store cannot be opened (message names the file or ensemble)
     */
    public static RegistryStore open(String spec) {
        RegistryStoreProvider p = providers().find(NamedProviders.name(spec));
        if (p == null) {
            throw new IllegalArgumentException("unknown store '" + spec + "': use " + usages());
        }
        return p.open(NamedProviders.argument(spec));
    }

    /** The forms the stores on the class path take, for help texts: {@code memory, file:PATH or ...}. */
    public static String usages() {
        String all = providers().all().values().stream().map(RegistryStoreProvider::usage)
                .collect(Collectors.joining(", "));
        int last = all.lastIndexOf(", ");
        return last < 0 ? all : all.substring(0, last) + " or " + all.substring(last + 2);
    }

    private static NamedProviders<RegistryStoreProvider> providers() {
        return NamedProviders.of(RegistryStoreProvider.class, "registry store", RegistryStoreProvider::name);
    }
}
