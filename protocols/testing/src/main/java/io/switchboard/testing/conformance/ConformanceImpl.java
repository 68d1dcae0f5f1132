package io.switchboard.testing.conformance;

import io.switchboard.protocol.ServerCallContext;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;

/** The conformance component's implementation: echoes what it gets and counts what it runs. */
public class ConformanceImpl implements Conformance {
    /** Executions of {@code increment}, to tell a call that ran once from one that ran twice. */
    public final AtomicLong increments = new AtomicLong();
    public final AtomicLong total = new AtomicLong();

    @Override
    public double[] echoDoubles(double[] values) {
        return values;
    }

    @Override
    public LinkEntry echoList(LinkEntry head) {
        return head;
    }

    @Override
    public void ping() {
        pings.incrementAndGet();
    }

    /** Executions of {@code ping}. */
    public final AtomicInteger pings = new AtomicInteger();

    @Override
    public Record echoRecord(Record record) {
        return record;
    }

    @Override
    public DivideResponse divide(long dividend, long divisor) throws DivideFaultException {
        if (divisor == 0) {
            DivideFault fault = new DivideFault();
            fault.setReason("division by zero");
            fault.setDividend(dividend);
            throw new DivideFaultException(fault);
        }
        DivideResponse r = new DivideResponse();
        r.setQuotient(dividend / divisor);
        r.setRemainder(dividend % divisor);
        return r;
    }

    @Override
    public long increment(int by) {
        increments.incrementAndGet();
        return total.addAndGet(by);
    }

    /** Executions of {@code deliver} per tag. */
    public final Map<String, AtomicInteger> deliveries = new ConcurrentHashMap<>();
    /** Counted down by each execution of {@code deliver}: a test sets it before it sends. */
    public volatile CountDownLatch delivered = new CountDownLatch(0);
    /** Rounds {@code spin} has run, all calls together. */
    public final AtomicLong spinRounds = new AtomicLong();
    /** Counted down when a {@code spin} has run its first round, and when a {@code spin} saw its call cancelled. */
    public volatile CountDownLatch spinStarted = new CountDownLatch(1);
    public volatile CountDownLatch spinSawCancel = new CountDownLatch(1);
    /** Ends every {@code spin} at its next round: for protocols whose server cannot notice a cancel. */
    public volatile boolean stopSpinning;

    @Override
    public void deliver(String tag) {
        deliveries.computeIfAbsent(tag, t -> new AtomicInteger()).incrementAndGet();
        delivered.countDown();
        if (tag.startsWith("fail:")) {
            throw new IllegalStateException("one-way failure " + tag);
        }
    }

    @Override
    public long spin(double[] values, int maxRounds) {
        long rounds = 0;
        while (rounds < maxRounds && !stopSpinning) {
            if (ServerCallContext.isCancelled()) {
                spinSawCancel.countDown();
                break;
            }
            spinRounds.incrementAndGet();
            rounds++;
            spinStarted.countDown();
            try {
                TimeUnit.MILLISECONDS.sleep(1);   // a slice of work that does not burn a core
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();   // the protocol interrupts a cancelled call: the next check sees it
            }
        }
        return rounds;
    }

    @Override
    public Tensor echoTensor(Tensor tensor) {
        return tensor;
    }

    @Override
    public IntTensor echoIntTensor(IntTensor tensor) {
        return tensor;
    }

    @Override
    public Record echoShared(Record record) {
        return record;
    }

    @Override
    public EchoMixedResponse echoMixed(Mixed list, java.util.List<Mixed> more) {
        EchoMixedResponse r = new EchoMixedResponse();
        r.setList(list);
        r.setMore(more);
        return r;
    }

    @Override
    public void fail(String message) {
        throw new IllegalStateException(message);
    }
}
