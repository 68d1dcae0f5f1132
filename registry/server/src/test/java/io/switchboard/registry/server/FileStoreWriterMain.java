package io.switchboard.registry.server;

import io.switchboard.registry.file.FileRegistryStore;
import io.switchboard.registry.file.FileRegistryStore;
import io.switchboard.registry.ComponentEntry;
import io.switchboard.protocol.Endpoint;
import java.nio.file.Path;
import java.util.List;

/**
 * Run in a child JVM by {@link FileRegistryStoreTest}: opens the store, prints "ready N" (N
 * entries named Burst already there), then for ever binds Burst N, N+1, ... and after each one
 * rebinds Counter to say which was last, until it is killed.
 */
public final class FileStoreWriterMain {
    private FileStoreWriterMain() {
    }

    static ComponentEntry burst(int i, String padding) {
        return new ComponentEntry("Burst", Integer.toString(i),
                List.of(new Endpoint("soap", "http://127.0.0.1:1/axis2/services/Burst" + i)), null, padding, null,
                null, List.of(), 30);
    }

    static ComponentEntry counter(int i) {
        return new ComponentEntry("Counter", "c", List.of(new Endpoint("soap", "http://127.0.0.1:1/axis2/services/C")),
                null, null, null, null, List.of(Integer.toString(i)));
    }

    public static void main(String[] args) throws Exception {
        String padding = "x".repeat(Integer.parseInt(args[1]));
        try (FileRegistryStore store = FileRegistryStore.open(Path.of(args[0]))) {
            int n = store.lookup("Burst").size();
            System.out.println("ready " + n);
            System.out.flush();
            for (int i = n; ; i++) {
                store.bind(burst(i, padding));
                store.rebind(counter(i));
            }
        }
    }
}
