package io.switchboard.bench.jmh;

import io.switchboard.protocol.CallIds;
import java.security.NoSuchAlgorithmException;
import java.security.SecureRandom;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeUnit;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.BenchmarkMode;
import org.openjdk.jmh.annotations.Fork;
import org.openjdk.jmh.annotations.Measurement;
import org.openjdk.jmh.annotations.Mode;
import org.openjdk.jmh.annotations.OutputTimeUnit;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.State;
import org.openjdk.jmh.annotations.Warmup;

/**
 * What a call id costs the small-call path, by generator: {@link CallIds#next()} (the platform's
 * default {@code SecureRandom}, shared), the same bits from DRBG shared or one per thread, and the
 * {@code ThreadLocalRandom} ids of before, which were predictable from one seen. Run it with as
 * many threads as callers share a client ({@code -t}), since the shared generators take a lock.
 *
 * <pre>{@code
 * java -cp "bench/target/classes:cli/target/lib/*" org.openjdk.jmh.Main CallId -f 1 -wi 3 -w 1 -i 5 -r 1 -t 2
 * ./switchboard bench --jmh CallId -- -t 2                            # the same, through the launcher
 * }</pre>
 */
@State(Scope.Benchmark)
@BenchmarkMode(Mode.AverageTime)
@OutputTimeUnit(TimeUnit.NANOSECONDS)
@Warmup(iterations = 3, time = 1)
@Measurement(iterations = 5, time = 1)
@Fork(value = 1, jvmArgsAppend = {"-Xms256m", "-Xmx256m"})
public class CallIdBenchmark {
    private static final SecureRandom SHARED_DRBG = drbg();
    private static final ThreadLocal<SecureRandom> DRBG_PER_THREAD = ThreadLocal.withInitial(CallIdBenchmark::drbg);

    private static SecureRandom drbg() {
        try {
            return SecureRandom.getInstance("DRBG");
        } catch (NoSuchAlgorithmException e) {
            throw new IllegalStateException(e);
        }
    }

    @Benchmark
    public String callIds() {
        return CallIds.next();
    }

    @Benchmark
    public byte[] drbgShared() {
        byte[] bits = new byte[16];
        SHARED_DRBG.nextBytes(bits);
        return bits;
    }

    @Benchmark
    public byte[] drbgPerThread() {
        byte[] bits = new byte[16];
        DRBG_PER_THREAD.get().nextBytes(bits);
        return bits;
    }

    /** The ids of before: fast, and the next ones follow from one seen. */
    @Benchmark
    public String threadLocalRandom() {
        ThreadLocalRandom r = ThreadLocalRandom.current();
        return Long.toHexString(r.nextLong() | Long.MIN_VALUE) + Long.toHexString(r.nextLong() | Long.MIN_VALUE);
    }
}
