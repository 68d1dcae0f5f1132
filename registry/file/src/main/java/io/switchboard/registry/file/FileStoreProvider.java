package io.switchboard.registry.file;

import io.switchboard.registry.store.RegistryStore;
import io.switchboard.registry.store.RegistryStoreProvider;
import java.nio.file.Path;

/** {@code file:PATH}: a snapshot file and its journal, which survive restarts, {@code ~/} for the user's home. */
public final class FileStoreProvider implements RegistryStoreProvider {
    @Override
    public String name() {
        return "file";
    }

    @Override
    public String usage() {
        return "file:PATH";
    }

    @Override
    public RegistryStore open(String argument) {
        if (argument == null || argument.isEmpty()) {
            throw new IllegalArgumentException("file: needs a path, as in file:/var/lib/switchboard/registry.json");
        }
        return FileRegistryStore.open(expandHome(argument));
    }

    static Path expandHome(String path) {
        if (path.equals("~") || path.startsWith("~/")) {
            return Path.of(System.getProperty("user.home"), path.substring(1).replaceFirst("^/", ""));
        }
        return Path.of(path);
    }
}
