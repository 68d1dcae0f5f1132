package io.switchboard.codec.proto;

import java.lang.ref.SoftReference;
import java.util.concurrent.atomic.AtomicReferenceArray;

/**
 * A few sets of arrays that a message's state grew to the message's size, kept softly between
 * messages so that the next large message of a long-running process does not grow them again
 * (garbage that made young collections copy half-decoded messages: docs/benchmarks/bulk.md).
 * Whoever gives arrays
 * back has cleared every reference in them first: nothing of one message stays reachable from the
 * pool. Thread-safe and lock-free; a taker gets a set or null.
 */
final class ScratchPool<T> {
    private final AtomicReferenceArray<SoftReference<T>> slots = new AtomicReferenceArray<>(4);

    /** A set given back earlier, or null. */
    T take() {
        for (int i = 0; i < slots.length(); i++) {
            if (slots.get(i) != null) {
                SoftReference<T> r = slots.getAndSet(i, null);
                T t = r == null ? null : r.get();
                if (t != null) {
                    return t;
                }
            }
        }
        return null;
    }

    /** Keeps {@code t} for a later taker, if a slot is free. */
    void give(T t) {
        SoftReference<T> r = new SoftReference<>(t);
        for (int i = 0; i < slots.length(); i++) {
            if (slots.get(i) == null && slots.compareAndSet(i, null, r)) {
                return;
            }
        }
    }
}
