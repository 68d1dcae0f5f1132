package io.switchboard.protocol.local;

import io.switchboard.protocol.Skeleton;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;

/** The skeletons exported in this JVM, by endpoint address; what local transports call. */
final class LocalExports {
    private static final Map<String, Skeleton> BY_ADDRESS = new ConcurrentHashMap<>();

    private LocalExports() {
    }

    static Skeleton get(String address) {
        return BY_ADDRESS.get(address);
    }

    static void put(String address, Skeleton skeleton) {
        BY_ADDRESS.put(address, skeleton);
    }

    static void remove(String address) {
        BY_ADDRESS.remove(address);
    }
}
