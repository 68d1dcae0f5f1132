package io.switchboard.registry;

import java.util.Iterator;
import java.util.LinkedHashMap;
import java.util.function.ToIntFunction;

/**
 * Internal: a map bounded by the bytes of its values, the least recently used let go first, for
 * answers kept in wire form on both ends of a registry read. Thread-safe.
 *
 * <pre>{@code
 * SizedLru<String, byte[]> kept = new SizedLru<>(16 << 20, a -> a.length);
 * kept.put("Echo", answer);
 * byte[] again = kept.get("Echo");
 * }</pre>
 */
public final class SizedLru<K, V> {
    private final LinkedHashMap<K, V> map = new LinkedHashMap<>(16, 0.75f, true);
    private final long maxBytes;
    private final ToIntFunction<V> bytes;
    private long held;

    /** {@code maxBytes}: what the values may hold together, as {@code bytes} counts each. */
    public SizedLru(long maxBytes, ToIntFunction<V> bytes) {
        this.maxBytes = maxBytes;
        this.bytes = bytes;
    }

    public synchronized V get(K key) {
        return map.get(key);
    }

    /** Keeps {@code value} under {@code key}, letting the least recently used go while over the bound. */
    public synchronized void put(K key, V value) {
        V before = map.put(key, value);
        held += bytes.applyAsInt(value) - (before == null ? 0 : bytes.applyAsInt(before));
        Iterator<V> eldest = map.values().iterator();
        while (held > maxBytes && eldest.hasNext()) {
            held -= bytes.applyAsInt(eldest.next());
            eldest.remove();
        }
    }

    /** The bytes held now. */
    public synchronized long bytes() {
        return held;
    }
}
