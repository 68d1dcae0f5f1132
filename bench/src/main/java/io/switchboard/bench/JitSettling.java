package io.switchboard.bench;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;

/**
 * The warm-up of a benchmark whose work spans JVMs: runs a round of the work a second at a time
 * until the JIT compilers of this JVM and of the others named worked less than 2% of that second
 * (their compiler threads' CPU, read from {@code /proc}), or the time allowed has passed. The
 * bench's cells settle the same way; a figure timed while the compilers still work measures the
 * compilers as much as the work.
 *
 * <pre>{@code
 * boolean quiet = JitSettling.untilQuiet(() -> lookUpForOneSecond(), Duration.ofSeconds(30), List.of(registry.pid()));
 * }</pre>
 */
public final class JitSettling {
    private JitSettling() {
    }

    /**
     * Runs {@code round} until the compilers of this JVM and of {@code otherPids} are quiet, for
     * at most {@code atMost}; whether they went quiet. Where {@code /proc} cannot be read (not
     * Linux) they count as quiet after the first second.
     */
    public static boolean untilQuiet(Runnable round, Duration atMost, List<Long> otherPids) {
        List<Long> pids = new ArrayList<>(otherPids);
        pids.add(ProcessHandle.current().pid());
        return Sweep.untilQuiet(round, System.nanoTime() + atMost.toNanos(), SchedulerAccount.of(pids)::compilingFromNow);
    }
}
