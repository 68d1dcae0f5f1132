package io.switchboard.extension;

import io.switchboard.registry.ComponentEntry;
import io.switchboard.registry.store.RegistryStore;
import io.switchboard.registry.store.RegistryStoreProvider;
import io.switchboard.registry.store.RegistryStores;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.List;

/**
 * {@code journal:PATH}: entries in memory, and a line in the file at PATH for every bind, so a
 * test in another process sees which store the registry used.
 */
public final class JournalStoreProvider implements RegistryStoreProvider {
    @Override
    public String name() {
        return "journal";
    }

    @Override
    public String usage() {
        return "journal:PATH";
    }

    @Override
    public RegistryStore open(String argument) {
        if (argument == null || argument.isEmpty()) {
            throw new IllegalArgumentException("journal needs a path, as in journal:/tmp/binds.txt");
        }
        return new Journal(RegistryStores.open("memory"), Path.of(argument));
    }

    /** Forwards to a memory store and appends the names it binds. */
    private static final class Journal implements RegistryStore {
        private final RegistryStore entries;
        private final Path file;

        Journal(RegistryStore entries, Path file) {
            this.entries = entries;
            this.file = file;
        }

        @Override
        public void bind(ComponentEntry entry) throws AlreadyBoundException {
            entries.bind(entry);
            try {
                Files.writeString(file, "bind " + entry.name() + "\n", StandardOpenOption.CREATE, StandardOpenOption.APPEND);
            } catch (IOException e) {
                throw new UncheckedIOException(e);
            }
        }

        @Override
        public void rebind(ComponentEntry entry) {
            entries.rebind(entry);
        }

        @Override
        public int unbind(String name, String instanceId) {
            return entries.unbind(name, instanceId);
        }

        @Override
        public List<ComponentEntry> lookup(String name) {
            return entries.lookup(name);
        }

        @Override
        public List<ComponentEntry> list() {
            return entries.list();
        }
    }
}
