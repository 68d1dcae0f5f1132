package io.switchboard.testing;

import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.time.ZoneId;
import java.time.ZoneOffset;

/** A clock a test moves by hand (leases, deadlines); starts at 2026-11-22T00:00:00Z, in UTC. */
public final class ManualClock extends Clock {
    private volatile Instant now = Instant.parse("2026-11-22T00:00:00Z");

    public void advance(Duration d) {
        now = now.plus(d);
    }

    @Override
    public Instant instant() {
        return now;
    }

    @Override
    public ZoneId getZone() {
        return ZoneOffset.UTC;
    }

    @Override
    public Clock withZone(ZoneId zone) {
        return this;
    }
}
