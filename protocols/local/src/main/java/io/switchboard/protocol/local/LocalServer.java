package io.switchboard.protocol.local;

import io.switchboard.protocol.Endpoint;
import io.switchboard.protocol.spi.ProtocolServer;
import io.switchboard.protocol.Skeleton;
import java.util.HashMap;
import java.util.Map;
import java.util.concurrent.atomic.AtomicLong;

/**
 * Exports skeletons into this JVM's table of local endpoints. Each server has its own number in
 * the address, so two servers in one JVM may both export a component of the same name (as two
 * processes would on two ports).
 */
final class LocalServer implements ProtocolServer {
    private static final AtomicLong SERVERS = new AtomicLong();

    private final String prefix = LocalProtocolProvider.SCHEME + "://" + LocalProtocolProvider.jvmId() + "/s"
            + SERVERS.incrementAndGet() + "/";
    private final Map<String, String> exported = new HashMap<>();
    private boolean closed;

    @Override
    public String protocol() {
        return LocalProtocolProvider.NAME;
    }

    @Override
    public synchronized Endpoint export(Skeleton skeleton) {
        if (closed) {
            throw new IllegalStateException("local server is closed");
        }
        String name = skeleton.descriptor().name();
        if (exported.containsKey(name)) {
            throw new IllegalStateException(name + " is already exported on this local server");
        }
        String address = prefix + name;
        exported.put(name, address);
        LocalExports.put(address, skeleton);
        return new Endpoint(protocol(), address);
    }

    @Override
    public synchronized void unexport(String componentName) {
        String address = exported.remove(componentName);
        if (address != null) {
            LocalExports.remove(address);
        }
    }

    @Override
    public synchronized void close() {
        closed = true;
        for (String address : exported.values()) {
            LocalExports.remove(address);
        }
        exported.clear();
    }
}
