package io.switchboard.bench;

import java.util.Arrays;

/**
 * One measurement cell: a workload at one size over one protocol, with its round-trip samples or
 * the reason it has none.
 *
 * <pre>{@code
 * Cell c = Cell.measured(Workload.DOUBLES, 1000, "socket", samplesNanos, 8_012, false, null, null);
 * c.medianMicros();
 * }</pre>
 *
 * @param samplesNanos round-trip times, sorted
 * @param wireBytes    bytes the client sent for one request, headers included; -1 when not measured
 * @param pinned       whether client and server ran on one CPU (small messages)
 * @param note         why the cell failed or was skipped, or a remark on a measured cell
 * @param ways         which protocol each timed call took, for a row whose policy chose it; null for the others
 */
public record Cell(Workload workload, int size, String protocol, Status status, long[] samplesNanos,
                   long wireBytes, boolean pinned, String note, WayCounts ways) {

    /** Whether a cell has numbers. */
    public enum Status { MEASURED, FAILED, SKIPPED }

    static Cell measured(Workload w, int size, String protocol, long[] samples, long wireBytes, boolean pinned, String note,
                         WayCounts ways) {
        long[] sorted = samples.clone();
        Arrays.sort(sorted);
        return new Cell(w, size, protocol, Status.MEASURED, sorted, wireBytes, pinned, note, ways);
    }

    static Cell failed(Workload w, int size, String protocol, boolean pinned, String reason) {
        return new Cell(w, size, protocol, Status.FAILED, new long[0], -1, pinned, reason, null);
    }

    static Cell skipped(Workload w, int size, String protocol, String reason) {
        return new Cell(w, size, protocol, Status.SKIPPED, new long[0], -1, false, reason, null);
    }

    public boolean isMeasured() {
        return status == Status.MEASURED;
    }

    public double medianMicros() {
        return quantileMicros(0.5);
    }

    public double p10Micros() {
        return quantileMicros(0.1);
    }

    public double p90Micros() {
        return quantileMicros(0.9);
    }

    public double minMicros() {
        return samplesNanos[0] / 1e3;
    }

    /** Payload moved per second of round trip, both directions counted (2 x payload / median), in 10^6 bytes. */
    public double payloadMegabytesPerSecond() {
        return 2.0 * workload.payloadBytes(size) / (medianMicros() / 1e6) / 1e6;
    }

    private double quantileMicros(double q) {
        return quantileMicros(samplesNanos, q);
    }

    /** Linear interpolation between order statistics of sorted samples (the usual "type 7" quantile), in µs. */
    static double quantileMicros(long[] sortedNanos, double q) {
        double pos = q * (sortedNanos.length - 1);
        int lo = (int) Math.floor(pos);
        int hi = Math.min(lo + 1, sortedNanos.length - 1);
        return (sortedNanos[lo] + (pos - lo) * (sortedNanos[hi] - sortedNanos[lo])) / 1e3;
    }
}
