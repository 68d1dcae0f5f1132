package io.switchboard.protocol.conformance;

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
    }

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
