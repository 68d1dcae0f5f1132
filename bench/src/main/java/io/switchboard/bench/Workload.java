package io.switchboard.bench;

import java.util.ArrayList;
import java.util.List;

/**
 * The SC2000 workloads: an empty call, an array of doubles, a linked list of {@code LinkEntry}
 * nodes. Payload is counted as the study did: 8 bytes per double, 34 per list node (long, short,
 * int, float, double and an 8-character string).
 *
 * <pre>{@code
 * Workload.DOUBLES.sizes(1_000_000);   // 10, 100, ..., 10^6
 * Workload.LIST.payloadBytes(1000);    // 34,000
 * }</pre>
 */
public enum Workload {
    EMPTY(0, 10_000_000),
    DOUBLES(8, 10_000_000),
    LIST(34, 1_000_000);

    private final int bytesPerElement;
    private final int largest;

    Workload(int bytesPerElement, int largest) {
        this.bytesPerElement = bytesPerElement;
        this.largest = largest;
    }

    /** The name used in the CSV and on the command line. */
    public String key() {
        return name().toLowerCase(java.util.Locale.ROOT);
    }

    public static Workload of(String key) {
        for (Workload w : values()) {
            if (w.key().equals(key.trim())) {
                return w;
            }
        }
        throw new IllegalArgumentException("unknown workload '" + key + "' (known: empty, doubles, list)");
    }

    /** The largest size the study's sweep goes to: 10^7 doubles, 10^6 nodes. */
    public int largest() {
        return largest;
    }

    public long payloadBytes(int size) {
        return (long) bytesPerElement * size;
    }

    /** Powers of ten from 10 up to {@code max} (capped at {@link #largest()}); the empty call has one size, 0. */
    public List<Integer> sizes(int max) {
        List<Integer> sizes = new ArrayList<>();
        if (this == EMPTY) {
            sizes.add(0);
            return sizes;
        }
        for (long n = 10; n <= Math.min(max, largest); n *= 10) {
            sizes.add((int) n);
        }
        return sizes;
    }
}
