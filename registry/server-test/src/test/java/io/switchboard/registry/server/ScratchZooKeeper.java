package io.switchboard.registry.server;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import org.apache.curator.test.DirectoryUtils;
import org.apache.curator.test.InstanceSpec;
import org.apache.curator.test.TestingServer;

/**
 * Curator's in-JVM ZooKeeper server in a directory of its own, removed on close. ZooKeeper's
 * embedded server writes its configuration beside its data directory, and Curator's default
 * data directory sits in the temporary directory itself, so each plain {@code TestingServer} left
 * a {@code zookeeper.configuration*.properties} file there for good.
 */
public final class ScratchZooKeeper extends TestingServer {
    private final Path base;

    private ScratchZooKeeper(Path base, int tickTimeMillis) throws Exception {
        super(new InstanceSpec(base.resolve("data").toFile(), -1, -1, -1, true, -1, tickTimeMillis, -1), true);
        this.base = base;
    }

    /** A started server with ZooKeeper's default tick. */
    public static ScratchZooKeeper started() throws Exception {
        return started(-1);
    }

    /** A started server whose tick is {@code tickTimeMillis}: sessions expire within 20 ticks. */
    public static ScratchZooKeeper started(int tickTimeMillis) throws Exception {
        return new ScratchZooKeeper(Files.createTempDirectory("sb-zookeeper-"), tickTimeMillis);
    }

    @Override
    public void close() throws IOException {
        try {
            super.close();
        } finally {
            DirectoryUtils.deleteRecursively(base.toFile());
        }
    }
}
