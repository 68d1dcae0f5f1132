package io.switchboard.codec.binary;

/**
 * Numbers objects by identity, 0, 1, 2, ... in the order they are first added: the node table's
 * index. An open-addressing table of keys, their identity hashes and int values. It replaces an
 * {@code IdentityHashMap<Object, Integer>}, which profiling showed to be half of the encoding time
 * of a long list: every value boxed, a lookup and an insert per new node, and every resize reading
 * each key's header again for its hash (a cache miss per node); here a resize reads only the
 * stored hashes.
 *
 * <pre>{@code
 * IdentityIndex index = new IdentityIndex();
 * index.addIfAbsent(node);   // its number, or -1 - the number it already had
 * index.indexOf(node);       // -1 when absent
 * }</pre>
 */
public final class IdentityIndex {
    private Object[] keys = new Object[64];
    private int[] hashes = new int[64];
    private int[] values = new int[64];
    private int size;

    /**
     * Numbers every linked node reachable from {@code root}, breadth first and without recursion,
     * appending them to {@code nodes} (the node table, in order); refuses more than {@code maxNodes}.
     */
    public static IdentityIndex collect(io.switchboard.idl.runtime.GraphHolder root, int maxNodes,
                                        java.util.List<Object> nodes) {
        IdentityIndex index = new IdentityIndex();
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

    /** Adds {@code key} with the next number and returns it; if present, returns {@code -1 - its number}. */
    public int addIfAbsent(Object key) {
        int h = System.identityHashCode(key);
        int mask = keys.length - 1;
        for (int i = mix(h) & mask; ; i = (i + 1) & mask) {
            Object k = keys[i];
            if (k == null) {
                keys[i] = key;
                hashes[i] = h;
                values[i] = size;
                if (++size * 2 > keys.length) {
                    grow();
                }
                return size - 1;
            }
            if (k == key) {
                return -1 - values[i];
            }
        }
    }

    /** The number of {@code key}, or -1 when it was never added. */
    public int indexOf(Object key) {
        int mask = keys.length - 1;
        for (int i = mix(System.identityHashCode(key)) & mask; ; i = (i + 1) & mask) {
            Object k = keys[i];
            if (k == key) {
                return values[i];
            }
            if (k == null) {
                return -1;
            }
        }
    }

    private void grow() {
        Object[] oldKeys = keys;
        int[] oldHashes = hashes;
        int[] oldValues = values;
        int capacity = oldKeys.length * 2;
        keys = new Object[capacity];
        hashes = new int[capacity];
        values = new int[capacity];
        int mask = capacity - 1;
        for (int j = 0; j < oldKeys.length; j++) {
            if (oldKeys[j] != null) {
                int i = mix(oldHashes[j]) & mask;
                while (keys[i] != null) {
                    i = (i + 1) & mask;
                }
                keys[i] = oldKeys[j];
                hashes[i] = oldHashes[j];
                values[i] = oldValues[j];
            }
        }
    }

    /** Spreads identity hashes (which may be sequential) over the table: Fibonacci hashing. */
    private static int mix(int h) {
        int x = h * 0x9E3779B9;
        return x ^ (x >>> 16);
    }
}
