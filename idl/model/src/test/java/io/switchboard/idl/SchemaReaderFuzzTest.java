package io.switchboard.idl;

import com.code_intelligence.jazzer.junit.FuzzTest;
import java.lang.management.ManagementFactory;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;

/**
 * Fuzzes {@link SchemaReader#read(byte[], String)}, which the registry runs on every interface
 * schema a component uploads, with arbitrary bytes. Only {@link SchemaException} may come out,
 * within 5 s, allocating at most 64 MiB plus 2 KiB per input byte. (The same rule as
 * {@code io.switchboard.testing.DecoderCheck}, inlined: this module sits below that one.)
 *
 * <p>CI runs the inputs in {@code src/test/resources/io/switchboard/idl/SchemaReaderFuzzTestInputs}
 * (the component schemas of this repository and crashers); to fuzz:
 * {@code JAZZER_FUZZ=1 JAZZER_INSTRUMENT='io.switchboard.**' mvn -pl idl/model test -Dtest=SchemaReaderFuzzTest}.
 */
class SchemaReaderFuzzTest {
    private static ExecutorService worker = newWorker();

    private static ExecutorService newWorker() {
        return Executors.newSingleThreadExecutor(r -> {
            Thread t = new Thread(r, "fuzz-schema-reader");
            t.setDaemon(true);
            return t;
        });
    }

    static {
        // the XML parser's classes load (and, when fuzzing, are instrumented) outside the time limit
        try {
            SchemaReader.read(new byte[] {'<', 'a', '/', '>'}, "warm-up.xsd");
        } catch (SchemaException expected) {
            // not a schema
        }
    }

    @FuzzTest(maxDuration = "2m")
    void read(byte[] input) throws InterruptedException {
        long allowed = (64L << 20) + 2048L * input.length;
        Outcome outcome = runOnce(input);
        if (outcome.allocated > allowed) {
            // the first run of a code path loads classes on the worker thread; a second run measures the reader alone
            outcome = runOnce(input);
        }
        if (outcome.allocated > allowed) {
            throw new AssertionError("read allocated " + outcome.allocated + " bytes for " + input.length
                    + " bytes of schema, more than " + allowed, outcome.thrown);
        }
        Throwable thrown = outcome.thrown;
        if (thrown != null && !(thrown instanceof SchemaException)) {
            throw new AssertionError("SchemaReader.read threw an undocumented " + thrown, thrown);
        }
    }

    private record Outcome(Throwable thrown, long allocated) {
    }

    private static Outcome runOnce(byte[] input) throws InterruptedException {
        Future<Outcome> outcome = worker.submit(() -> {
            com.sun.management.ThreadMXBean threads =
                    (com.sun.management.ThreadMXBean) ManagementFactory.getThreadMXBean();
            long before = threads.getCurrentThreadAllocatedBytes();
            Throwable thrown = null;
            try {
                SchemaReader.read(input, "fuzz.xsd");
            } catch (Throwable t) {
                thrown = t;
            }
            return new Outcome(thrown, threads.getCurrentThreadAllocatedBytes() - before);
        });
        try {
            return outcome.get(5, TimeUnit.SECONDS);
        } catch (TimeoutException e) {
            worker.shutdownNow();
            worker = newWorker();
            throw new AssertionError("SchemaReader.read did not finish within 5 s on " + input.length + " bytes");
        } catch (ExecutionException e) {
            throw new AssertionError(e.getCause());
        }
    }
}
