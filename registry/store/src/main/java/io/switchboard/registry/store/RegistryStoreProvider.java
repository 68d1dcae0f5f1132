package io.switchboard.registry.store;

/**
 * A kind of registry store, found through {@link java.util.ServiceLoader} and named by the scheme
 * its specs start with ({@code memory}, {@code file:PATH}, {@code zookeeper://...}). Register it in
 * {@code META-INF/services/io.switchboard.registry.store.RegistryStoreProvider}; {@link
 * RegistryStores#open} and the command line then accept it by name.
 *
 * <pre>{@code
 * public final class EtcdStoreProvider implements RegistryStoreProvider {
 *     public String name() { return "etcd"; }
 *     public String usage() { return "etcd://HOST:PORT/PREFIX"; }
 *     public RegistryStore open(String argument) { return EtcdStore.connect(argument); }
 * }
 * }</pre>
 */
public interface RegistryStoreProvider {
    /** The scheme: the part of a spec before its first colon. */
    String name();

    /** The spec's form, for messages ({@code file:PATH}). */
    String usage();

    /**
     * Opens the store a spec names.
     *
     * @param argument the spec after {@code name:}, or null for a spec that is the name alone
     * @throws IllegalArgumentException the argument is not one this store takes (say how it should look)
     * @throws RegistryStore.StoreException the store cannot be opened
     */
    RegistryStore open(String argument);
}
