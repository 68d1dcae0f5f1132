package io.switchboard.metastub;

import java.util.List;

/** The first protocol of the client's list that the server speaks: the SC2000 "simple match". */
public final class FirstCommonPolicy implements SelectionPolicy {
    public static final String NAME = "first-common";

    @Override
    public String name() {
        return NAME;
    }

    @Override
    public String select(CallContext call, List<String> candidates) {
        return candidates.get(0);
    }
}
