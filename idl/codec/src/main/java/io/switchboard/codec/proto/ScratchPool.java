package io.switchboard.codec.proto;

import java.lang.ref.SoftReference;
import java.util.concurrent.atomic.AtomicReferenceArray;
import java.util.function.Predicate;

/**
 * A few things kept softly between messages so that the next large message of a long-running
 * process does not make them again: the arrays a message's state grew to its size (garbage that
 * made young collections copy half-decoded messages: docs/benchmarks/bulk.md), a transport's
 * large frames' arrays (which the JVM would zero anew). Whoever gives a thing back has cleared
 * every reference in it first: nothing of one message stays reachable from the pool; an array of
 * bytes keeps its old bytes, which its next taker reads only as far as it wrote. Thread-safe and
 * lock-free; a taker gets one thing, which no other taker has, or null.
 *
 * <pre>{@code
 * ScratchPool<byte[]> arrays = new ScratchPool<>(4);
 * byte[] a = arrays.take(b -> b.length >= n);
 * if (a == null) a = new byte[n];
 * ... use a ...
 * arrays.give(a);
 * }</pre>
 */
public final class ScratchPool<T> {
    private final AtomicReferenceArray<SoftReference<T>> slots;

    /** A pool of four places. */
    public ScratchPool() {
        this(4);
    }

    /** A pool of {@code places} places. */
    public ScratchPool(int places) {
        slots = new AtomicReferenceArray<>(places);
    }

    /** A thing given back earlier, or null. */
    public T take() {
        return take(t -> true);
    }

    /** A thing given back earlier that {@code fits}, taken out of the pool; or null. */
    public T take(Predicate<? super T> fits) {
        for (int i = 0; i < slots.length(); i++) {
            SoftReference<T> r = slots.get(i);
            T t = r == null ? null : r.get();
            if (t != null && fits.test(t) && slots.compareAndSet(i, r, null)) {
                return t;
            }
        }
        return null;
    }

    /** Keeps {@code t} for a later taker, if a place is free (or holds only what the collector took back). */
    public void give(T t) {
        for (int i = 0; i < slots.length(); i++) {
            SoftReference<T> r = slots.get(i);
            if ((r == null || r.get() == null) && slots.compareAndSet(i, r, new SoftReference<>(t))) {
                return;
            }
        }
    }
}
