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

    /** Calls served so far. */
    public long calls() {
        return calls.get();
    }
}
