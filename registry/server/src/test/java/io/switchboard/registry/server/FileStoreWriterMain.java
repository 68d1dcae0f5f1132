package io.switchboard.registry.server;

import io.switchboard.registry.file.FileRegistryStore;
import io.switchboard.registry.ComponentEntry;
import io.switchboard.protocol.Endpoint;
import java.nio.file.Path;
import java.util.List;

/**
 * Run in a child JVM by {@link FileRegistryStoreTest}: opens the store, prints "ready N" (N
 * entries named Burst already there), then for ever binds Burst N, N+1, ... and after each one
 * rebinds Counter to say which was last, until it is killed; or, given a third argument K, halts
 * the JVM at once after K writes (no shutdown hooks, as a kill would stop it).
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
            long haltAfter = args.length > 2 ? Long.parseLong(args[2]) : Long.MAX_VALUE;
            long writes = 0;
            for (int i = n; ; i++) {
                store.bind(burst(i, padding));
                if (++writes == haltAfter) {
                    Runtime.getRuntime().halt(0);
                }
                store.rebind(counter(i));
                if (++writes == haltAfter) {
                    Runtime.getRuntime().halt(0);
                }
            }
        }
    }
}
