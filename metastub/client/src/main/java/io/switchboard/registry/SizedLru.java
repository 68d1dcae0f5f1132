package io.switchboard.registry;

import java.util.Iterator;
import java.util.LinkedHashMap;
import java.util.function.ToIntFunction;

/**
 * Internal: a map bounded in size, the least recently used let go first, for what either end of a
 * registry read keeps to save work: answers in wire form, bounded by their bytes, or digests,
 * documents and endpoints, bounded by {@linkplain #ofEntries how many}. A get or a put makes an
 * entry the most recently used; {@link #containsKey} does not. Thread-safe: each call is atomic
 * (a caller wanting get-then-put as one step holds its own lock around both).
 *
 * <pre>{@code
 * SizedLru<String, byte[]> kept = new SizedLru<>(16 << 20, a -> a.length);
 * kept.put("Echo", answer);
 * byte[] again = kept.get("Echo");
 * SizedLru<String, String> digests = SizedLru.ofEntries(1024);
 * }</pre>
 */
public final class SizedLru<K, V> {
    private final LinkedHashMap<K, V> map = new LinkedHashMap<>(16, 0.75f, true);
    private final long maxBytes;
    private final ToIntFunction<? super V> bytes;
    private long held;

    /** {@code maxBytes}: what the values may hold together, as {@code bytes} counts each. */
    public SizedLru(long maxBytes, ToIntFunction<? super V> bytes) {
        this.maxBytes = maxBytes;
        this.bytes = bytes;
    }

    /** At most {@code maxEntries} entries, whatever their values hold: each counts as one. */
    public static <K, V> SizedLru<K, V> ofEntries(int maxEntries) {
        return new SizedLru<>(maxEntries, v -> 1);
    }

    /** The value kept under {@code key}, which becomes the most recently used; null if none. */
    public synchronized V get(K key) {
        return map.get(key);
    }

    /** Whether a value is kept under {@code key}, leaving the order of use as it was. */
    public synchronized boolean containsKey(K key) {
        return map.containsKey(key);
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

    /** The bytes held now (for {@link #ofEntries}, the entries). */
    public synchronized long bytes() {
        return held;
    }

    /** How many entries are kept now. */
    public synchronized int size() {
        return map.size();
    }
}
