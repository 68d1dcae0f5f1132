package io.switchboard.codec.message;

/**
 * Numbers objects by identity, 0, 1, 2, ... in the order they are first added: the node table's
 * index. The keys in their order, and an open-addressing table of one {@code long} per slot: a
 * key's identity hash and its number. It replaces an {@code IdentityHashMap<Object, Integer>},
 * which profiling showed to be half of the encoding time of a long list: every value boxed, a
 * lookup and an insert per new node, and every resize reading each key's header again for its hash
 * (a cache miss per node); here a resize reads only the stored hashes. Adding a new key touches
 * one random slot of the table (keys, hashes and values in three arrays took three cache misses
 * per node) and appends to the key order; the key itself is compared only when its hash matches.
 *
 * <pre>{@code
 * IdentityIndex index = new IdentityIndex();
 * index.addIfAbsent(node);   // its number, or -1 - the number it already had
 * index.indexOf(node);       // -1 when absent
 * }</pre>
 */
public final class IdentityIndex {
    /** Per slot: the key's number + 1 in the high half (0: empty), its identity hash in the low. */
    private long[] table = new long[64];
    /** The keys by number. */
    private Object[] keys = new Object[32];
    private int size;

    /**
     * Numbers every linked node reachable from {@code root}, breadth first and without recursion,
     * appending them to {@code nodes} (the node table, in order); refuses more than {@code maxNodes}.
     */
    public static IdentityIndex collect(io.switchboard.idl.runtime.GraphHolder root, int maxNodes,
                                        java.util.List<Object> nodes) {
        return collect(root, maxNodes, nodes, new IdentityIndex());
    }

    /** {@link #collect(io.switchboard.idl.runtime.GraphHolder, int, java.util.List)} into an empty {@code index} (a cleared one reused). */
    public static IdentityIndex collect(io.switchboard.idl.runtime.GraphHolder root, int maxNodes,
                                        java.util.List<Object> nodes, IdentityIndex index) {
        java.util.function.Consumer<Object> enqueue = node -> {
            if (index.addIfAbsent(node) >= 0) {
                if (nodes.size() >= maxNodes) {
                    throw new WireFormatException(WireFormatException.NODE_LIMIT,
                            "message holds more than " + maxNodes + " linked nodes");
                }
                nodes.add(node);
            }
        };
        root.switchboardVisitReferences(enqueue);
        // the list is its own work queue: nodes found later are appended and visited in turn
        for (int i = 0; i < nodes.size(); i++) {
            if (nodes.get(i) instanceof io.switchboard.idl.runtime.GraphHolder h) {
                h.switchboardVisitReferences(enqueue);
            }
        }
        return index;
    }

    public int size() {
        return size;
    }

    /** Slots of the table: twice the keys it can hold before it grows. */
    public int capacity() {
        return table.length;
    }

    /** Forgets every key (no reference to them stays), keeping the table's capacity for reuse. */
    public void clear() {
        if (size > 0) {
            java.util.Arrays.fill(table, 0L);
            java.util.Arrays.fill(keys, 0, size, null);
            size = 0;
        }
    }

    /** Adds {@code key} with the next number and returns it; if present, returns {@code -1 - its number}. */
    public int addIfAbsent(Object key) {
        int h = System.identityHashCode(key);
        int mask = table.length - 1;
        for (int i = mix(h) & mask; ; i = (i + 1) & mask) {
            long e = table[i];
            if (e == 0) {
                if (size == keys.length) {
                    keys = java.util.Arrays.copyOf(keys, size * 2);
                }
                keys[size] = key;
                table[i] = ((long) (size + 1) << 32) | (h & 0xFFFFFFFFL);
                if (++size * 2 > table.length) {
                    grow();
                }
                return size - 1;
            }
            if ((int) e == h) {
                int number = (int) (e >>> 32) - 1;
                if (keys[number] == key) {
                    return -1 - number;
                }
            }
        }
    }

    /** The number of {@code key}, or -1 when it was never added. */
    public int indexOf(Object key) {
        int h = System.identityHashCode(key);
        int mask = table.length - 1;
        for (int i = mix(h) & mask; ; i = (i + 1) & mask) {
            long e = table[i];
            if (e == 0) {
                return -1;
            }
            if ((int) e == h) {
                int number = (int) (e >>> 32) - 1;
                if (keys[number] == key) {
                    return number;
                }
            }
        }
    }

    private void grow() {
        long[] old = table;
        table = new long[old.length * 2];
        int mask = table.length - 1;
        for (long e : old) {
            if (e != 0) {
                int i = mix((int) e) & mask;
                while (table[i] != 0) {
                    i = (i + 1) & mask;
                }
                table[i] = e;
            }
        }
    }

    /** Spreads identity hashes (which may be sequential) over the table: Fibonacci hashing. */
    private static int mix(int h) {
        int x = h * 0x9E3779B9;
        return x ^ (x >>> 16);
    }
}
