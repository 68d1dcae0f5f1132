package io.switchboard.cli;

import io.switchboard.metastub.CallRecord;
import java.util.Collection;
import java.util.Map;
import java.util.TreeMap;

/**
 * One stage of {@code ./switchboard demo} as its summary table shows it: the calls the demo's
 * clients made (attempts per protocol, fallbacks) and whether every answer was right.
 * {@code ok} is null for a stage that was skipped.
 */
record DemoStageResult(String stage, long calls, Map<String, Long> attemptsPerProtocol, long fallbacks, Boolean ok,
        String note) {

    /** Counts the answered calls, the attempts per protocol and the fallbacks among {@code records}. */
    static DemoStageResult of(String stage, Collection<CallRecord> records, boolean ok, String note) {
        Map<String, Long> perProtocol = new TreeMap<>();
        records.forEach(r -> perProtocol.merge(r.protocol(), 1L, Long::sum));
        long answered = records.stream().filter(CallRecord::succeeded).count();
        long fallbacks = records.stream().filter(CallRecord::fallback).count();
        return new DemoStageResult(stage, answered, perProtocol, fallbacks, ok, note);
    }

    static DemoStageResult skipped(String stage, String why) {
        return new DemoStageResult(stage, 0, Map.of(), 0, null, why);
    }

    String answers() {
        return ok == null ? "skipped" : ok ? "exact" : "WRONG";
    }
}
