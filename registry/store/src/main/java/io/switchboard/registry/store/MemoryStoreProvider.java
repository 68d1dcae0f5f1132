package io.switchboard.registry.store;

/** {@code memory}: entries live as long as the registry process. */
public final class MemoryStoreProvider implements RegistryStoreProvider {
    @Override
    public String name() {
        return "memory";
    }

    @Override
    public String usage() {
        return "memory";
    }

    @Override
    public RegistryStore open(String argument) {
        if (argument != null) {
            throw new IllegalArgumentException("memory takes no argument");
        }
        return new InMemoryRegistryStore();
    }
}
