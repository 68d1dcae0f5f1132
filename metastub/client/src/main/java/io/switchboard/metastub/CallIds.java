package io.switchboard.metastub;

import java.util.concurrent.ThreadLocalRandom;

/** Call ids: 128 random bits, hex. Unique enough across clients without coordination. */
final class CallIds {
    private CallIds() {
    }

    static String next() {
        ThreadLocalRandom r = ThreadLocalRandom.current();
        return Long.toHexString(r.nextLong() | Long.MIN_VALUE) + Long.toHexString(r.nextLong() | Long.MIN_VALUE);
    }
}
