package io.switchboard.client.load;

import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicLongArray;
import java.util.concurrent.atomic.LongAdder;

/**
 * Latencies in buckets of about 1.5 % (64 per power of two of microseconds), without locks:
 * millions of calls in constant memory.
 *
 * <pre>{@code
 * histogram.record(System.nanoTime() - start);
 * double p99 = histogram.percentileMillis(99);
 * }</pre>
 */
public final class LatencyHistogram {
    private static final int SUB = 64;
    private final AtomicLongArray buckets = new AtomicLongArray(SUB * 40);
    private final AtomicLong max = new AtomicLong();
    private final LongAdder count = new LongAdder();

    /** Records one latency, in nanoseconds. */
    public void record(long nanos) {
        long micros = Math.max(0, nanos / 1000);
        buckets.incrementAndGet(index(micros));
        count.increment();
        max.accumulateAndGet(nanos, Math::max);
    }

    static int index(long micros) {
        if (micros < SUB) {
            return (int) micros;
        }
        int exponent = 63 - Long.numberOfLeadingZeros(micros);   // >= 6
        int mantissa = (int) ((micros >>> (exponent - 6)) & (SUB - 1));
        return (exponent - 5) * SUB + mantissa;
    }

    /** The lowest value (µs) of a bucket. */
    static long lowest(int index) {
        if (index < SUB) {
            return index;
        }
        int exponent = index / SUB + 5;
        long mantissa = index % SUB;
        return (SUB + mantissa) << (exponent - 6);
    }

    /** The {@code p}th percentile (0 to 100) in milliseconds, to within a bucket; 0 before any record. */
    public double percentileMillis(double p) {
        long n = count.sum();
        if (n == 0) {
            return 0;
        }
        long rank = (long) Math.ceil(p / 100 * n);
        long seen = 0;
        for (int i = 0; i < buckets.length(); i++) {
            seen += buckets.get(i);
            if (seen >= rank) {
                return Math.min(lowest(i + 1) / 1000.0, maxMillis());
            }
        }
        return maxMillis();
    }

    /** The largest latency recorded, in milliseconds. */
    public double maxMillis() {
        return max.get() / 1e6;
    }
}
