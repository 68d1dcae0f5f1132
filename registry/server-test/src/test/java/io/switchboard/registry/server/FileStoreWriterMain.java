package io.switchboard.registry.server;

import io.switchboard.registry.file.FileRegistryStore;
import io.switchboard.registry.ComponentEntry;
import io.switchboard.protocol.Endpoint;
import java.nio.file.Path;
import java.util.List;
import java.util.function.Consumer;

/**
 * Run in a child JVM by {@link FileRegistryStoreTest}: opens the store, prints "ready N" (N
 * entries named Burst already there), then for ever binds Burst N, N+1, ... and after each one
 * rebinds Counter to say which was last, until it is killed; or, given a third argument K, halts
 * the JVM at once after K writes (no shutdown hooks, as a kill would stop it); or, given a fourth
 * argument STEP:N, halts at once after the N-th compaction's step STEP
 * ({@link FileRegistryStore#SNAPSHOT_WRITTEN} and the others). The store compacts its journal
 * once it passes {@link #COMPACT_AFTER_BYTES} (and the snapshot), so a run of a few hundred
 * writes crosses several compactions.
 */
public final class FileStoreWriterMain {
    static final long COMPACT_AFTER_BYTES = 16 << 10;

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
        String[] haltAt = args.length > 3 ? args[3].split(":") : new String[] {"", "0"};
        int[] seen = {0};
        Consumer<String> steps = step -> {
            if (step.equals(haltAt[0]) && ++seen[0] == Integer.parseInt(haltAt[1])) {
                Runtime.getRuntime().halt(0);
            }
        };
        try (FileRegistryStore store = FileRegistryStore.open(Path.of(args[0]), FileRegistryStore.DEFAULT_MAX_BYTES,
                COMPACT_AFTER_BYTES, steps)) {
            int n = store.lookup("Burst").size();
            System.out.println("ready " + n);
            System.out.flush();
            long haltAfter = args.length > 2 ? Long.parseLong(args[2]) : Long.MAX_VALUE;
            haltAfter = haltAfter <= 0 ? Long.MAX_VALUE : haltAfter;
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
