package io.switchboard.components.echo;

import java.util.concurrent.atomic.AtomicLong;

/**
 * The echo component: returns what it receives. Counts calls so a caller can see what ran.
 *
 * <pre>{@code
 * Skeleton skeleton = EchoComponent.skeleton(new EchoService());
 * }</pre>
 */
public class EchoService implements Echo {
    private final AtomicLong calls = new AtomicLong();

    @Override
    public double[] echoDoubles(double[] values) {
        calls.incrementAndGet();
        return values;
    }

    @Override
    public LinkEntry echoList(LinkEntry head) {
        calls.incrementAndGet();
        return head;
    }

    @Override
    public void empty() {
        calls.incrementAndGet();
    }

    @Override
    public Tensor echoTensor(Tensor tensor) {
        calls.incrementAndGet();
        return tensor;
    }

    @Override
    public Mixed echoMixed(Mixed list) {
        calls.incrementAndGet();
        return list;
    }

    /** Integer division; a divisor of 0 raises the declared fault, naming the dividend. */
    @Override
    public DivideResponse divide(long dividend, long divisor) throws DivideFaultException {
        calls.incrementAndGet();
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

    /** Calls served so far. */
    public long calls() {
        return calls.get();
    }
}
