package io.switchboard.registry.server;

import java.net.SocketAddress;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * The registry stream listener's reads ({@code lookup}, {@code listEntries}) in flight: at most
 * {@code max} queued or running in all and {@code maxPerConnection} from one connection, so a
 * client that sends ten thousand at once is refused beyond its share at once, and neither queues
 * without bound nor keeps another client's read waiting behind its own.
 */
final class ReadGate {
    private final int max;
    private final int maxPerConnection;
    private final AtomicInteger inFlight = new AtomicInteger();
    private final Map<SocketAddress, AtomicInteger> perConnection = new ConcurrentHashMap<>();

    ReadGate(int max, int maxPerConnection) {
        if (max <= 0 || maxPerConnection <= 0) {
            throw new IllegalArgumentException("read limits must be positive: " + max + ", " + maxPerConnection);
        }
        this.max = max;
        this.maxPerConnection = maxPerConnection;
    }

    /** Counts a read from {@code connection}: null if admitted (then {@link #leave} it), else why not. */
    String enter(SocketAddress connection) {
        AtomicInteger mine = perConnection.compute(connection, (k, n) -> {
            AtomicInteger c = n == null ? new AtomicInteger() : n;
            c.incrementAndGet();
            return c;
        });
        if (mine.get() > maxPerConnection) {
            leaveConnection(connection);
            return "this connection has " + maxPerConnection + " reads in flight, its share; wait for their answers";
        }
        if (inFlight.incrementAndGet() > max) {
            inFlight.decrementAndGet();
            leaveConnection(connection);
            return "this registry server has " + max + " reads in flight, its limit; try again shortly";
        }
        return null;
    }

    void leave(SocketAddress connection) {
        inFlight.decrementAndGet();
        leaveConnection(connection);
    }

    private void leaveConnection(SocketAddress connection) {
        perConnection.computeIfPresent(connection, (k, n) -> n.decrementAndGet() <= 0 ? null : n);
    }

    /** Reads in flight now. */
    int inFlight() {
        return inFlight.get();
    }
}
