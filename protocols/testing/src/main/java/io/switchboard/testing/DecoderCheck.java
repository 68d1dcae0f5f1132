package io.switchboard.testing;

import io.switchboard.protocol.DaemonThreads;
import java.lang.management.ManagementFactory;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.Callable;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;

/**
 * The rule every fuzz target checks: a decoder given arbitrary input either returns a value or
 * throws one of its documented exception types, within a time bound and without allocating far
 * more than the input could justify. Anything else (an {@link Error} such as
 * {@link OutOfMemoryError} or {@link StackOverflowError}, a {@link NullPointerException}, an
 * index or cast exception, a hang) becomes an {@link AssertionError}, which Jazzer reports as a
 * finding and JUnit as a failure.
 *
 * <pre>{@code
 * private static final DecoderCheck CHECK = new DecoderCheck(Duration.ofSeconds(5), List.of(WireFormatException.class));
 * @FuzzTest void decode(byte[] data) { CHECK.run(data.length, () -> decoder.read(data)); }
 * }</pre>
 *
 * The decoder runs on a worker thread of its own (replaced after a hang), so that a hang is
 * reported rather than waited for and its allocation can be measured per input. What a decoder
 * accepts must also survive its writer: {@link #assertRoundTrip}.
 */
public final class DecoderCheck {
    private final Duration timeout;
    private final List<Class<? extends Throwable>> documented;
    private final long allocationSlackBytes;
    private final long allocationPerInputByte;
    private ExecutorService worker = newWorker();

    /**
     * @param timeout    longest one input may take
     * @param documented exception types the decoder documents for bad input (subclasses count)
     */
    public DecoderCheck(Duration timeout, List<Class<? extends Throwable>> documented) {
        this(timeout, documented, 64L << 20, 256);
    }

    /**
     * @param allocationSlackBytes   bytes any input may allocate (parsers, buffers)
     * @param allocationPerInputByte how many bytes the decoder may allocate per input byte beyond that
     */
    public DecoderCheck(Duration timeout, List<Class<? extends Throwable>> documented, long allocationSlackBytes,
                        long allocationPerInputByte) {
        this.timeout = timeout;
        this.documented = List.copyOf(documented);
        this.allocationSlackBytes = allocationSlackBytes;
        this.allocationPerInputByte = allocationPerInputByte;
    }

    private static ExecutorService newWorker() {
        return Executors.newSingleThreadExecutor(DaemonThreads.named("fuzz-decoder"));
    }

    /**
     * Runs {@code decode} on input of {@code inputLength} bytes.
     *
     * @return what the decoder returned, or null when it refused the input with a documented exception
     * @throws AssertionError on anything else
     */
    public synchronized <T> T run(long inputLength, Callable<T> decode) {
        long allowed = allocationSlackBytes + allocationPerInputByte * inputLength;
        Outcome<T> outcome = runOnce(inputLength, decode);
        if (outcome.allocated > allowed) {
            // the first run of a code path loads (and, when fuzzing, instruments) classes on this
            // thread; the decoder is deterministic, so a second run measures the decoder alone
            outcome = runOnce(inputLength, decode);
        }
        if (outcome.allocated > allowed) {
            throw new AssertionError("the decoder allocated " + outcome.allocated + " bytes for " + inputLength
                    + " bytes of input, more than " + allowed + (outcome.error == null ? ""
                    : " (then threw " + outcome.error + ")"), outcome.error);
        }
        if (outcome.error == null) {
            return outcome.value;
        }
        for (Class<? extends Throwable> type : documented) {
            if (type.isInstance(outcome.error)) {
                return null;
            }
        }
        throw new AssertionError("the decoder threw an undocumented " + outcome.error.getClass().getName()
                + " on " + inputLength + " bytes of input: " + outcome.error.getMessage(), outcome.error);
    }

    /** Writes a decoded value in its wire form; for {@link #assertRoundTrip}. */
    @FunctionalInterface
    public interface Writer<T> {
        byte[] write(T value) throws Exception;
    }

    /** Reads a value from its wire form; for {@link #assertRoundTrip}. */
    @FunctionalInterface
    public interface Reader<T> {
        T read(byte[] bytes) throws Exception;
    }

    /**
     * The round trip every fuzz target checks on what its decoder accepted: the value is written,
     * read back, and written again, and both writings must be the same bytes. A writer that refuses
     * what its reader took, a reader that reads its own writer's output as something else, a value
     * that changes as it travels: each is an {@link AssertionError}, a finding. (Compared by bytes
     * so that values without {@code equals} can be checked, cycles and all.)
     */
    public static <T> void assertRoundTrip(T value, Writer<T> write, Reader<T> read) {
        byte[] first;
        try {
            first = write.write(value);
        } catch (Exception | Error e) {
            throw new AssertionError("the writer refused a value its reader accepted: " + e, e);
        }
        byte[] second;
        try {
            second = write.write(read.read(first));
        } catch (Exception | Error e) {
            throw new AssertionError("the reader refused what the writer wrote: " + e, e);
        }
        if (!java.util.Arrays.equals(first, second)) {
            throw new AssertionError("a value changed in a round trip:\n" + show(first) + "\nread and written again as\n"
                    + show(second));
        }
    }

    private static String show(byte[] bytes) {
        String text = new String(bytes, java.nio.charset.StandardCharsets.UTF_8);
        boolean printable = text.chars().allMatch(c -> c >= 0x20 || c == '\n' || c == '\t' || c == '\r');
        return printable ? text : java.util.HexFormat.of().formatHex(bytes);
    }

    private <T> Outcome<T> runOnce(long inputLength, Callable<T> decode) {
        Future<Outcome<T>> future = worker.submit(() -> measure(decode));
        try {
            return future.get(timeout.toMillis(), TimeUnit.MILLISECONDS);
        } catch (TimeoutException e) {
            worker.shutdownNow();
            worker = newWorker();
            throw new AssertionError("the decoder did not finish within " + timeout + " on " + inputLength
                    + " bytes of input (a hang)");
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new AssertionError("interrupted", e);
        } catch (ExecutionException e) {
            throw new AssertionError("the decoder harness failed", e.getCause());
        }
    }

    private static <T> Outcome<T> measure(Callable<T> decode) {
        com.sun.management.ThreadMXBean threads = (com.sun.management.ThreadMXBean) ManagementFactory.getThreadMXBean();
        long before = threads.getCurrentThreadAllocatedBytes();
        T value = null;
        Throwable error = null;
        try {
            value = decode.call();
        } catch (Throwable t) { // an Error too: that is what the check is for
            error = t;
        }
        long allocated = threads.getCurrentThreadAllocatedBytes() - before;
        return new Outcome<>(value, error, allocated);
    }

    private record Outcome<T>(T value, Throwable error, long allocated) {
    }
}
