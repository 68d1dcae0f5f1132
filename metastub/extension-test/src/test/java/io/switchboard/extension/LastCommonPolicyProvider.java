package io.switchboard.extension;

import io.switchboard.metastub.CallContext;
import io.switchboard.metastub.SelectionPolicy;
import io.switchboard.metastub.SelectionPolicyProvider;
import java.util.List;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * {@code last-common}: the last protocol both sides speak, in the client's order (SOAP with
 * the default order). It counts its choices, so a test sees that the command line used it.
 */
public final class LastCommonPolicyProvider implements SelectionPolicyProvider {
    static final AtomicInteger CHOICES = new AtomicInteger();

    @Override
    public String name() {
        return "last-common";
    }

    @Override
    public String usage() {
        return "last-common";
    }

    @Override
    public SelectionPolicy create(String argument) {
        return new SelectionPolicy() {
            @Override
            public String name() {
                return "last-common";
            }

            @Override
            public String select(CallContext call, List<String> candidates) {
                CHOICES.incrementAndGet();
                return candidates.get(candidates.size() - 1);
            }
        };
    }
}
