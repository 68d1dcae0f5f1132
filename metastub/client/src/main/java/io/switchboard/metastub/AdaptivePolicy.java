package io.switchboard.metastub;

import io.switchboard.idl.runtime.OperationDescriptor;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.LongSupplier;

/**
 * Predicts each candidate's round-trip time for this call's payload and takes the fastest; the
 * default policy. Each operation over each protocol to each endpoint has a cost model, time =
 * fixed cost + payload × cost per byte, so that an operation's own running time (a computation on
 * the server) counts for every protocol of that operation alike and does not make another
 * operation's protocol look slow. A model starts from a prior (SOAP costly per byte, as the SC2000 and Blue Pencil
 * studies measured, and per call, as this implementation's bench does) and follows the calls
 * the meta-stub makes: small calls refine the fixed cost, large ones the cost per byte, each as a
 * low quantile of the times seen, so that queueing under load does not hide which protocol costs
 * less ({@link CostModel}). So the crossover follows the real network and server. Now and then, when the runner-up is predicted
 * within 1.5x of the best, it tries the runner-up to keep both models fresh; never where the
 * difference is larger, even by microseconds (a runner-up 5x slower than a 25 µs call), and a
 * runner-up that has not been tried for a while is tried once more ({@link #REPROBE_NANOS}).
 *
 * <p>Calls made while this JVM has more than {@link #SATURATED_PER_CORE} attempts per core under
 * way ({@link CallRecord#callsInFlight()}) are not learned from. Their times are mostly waiting,
 * and the protocols do not wait in one queue: a gRPC channel's event loop and SOAP's thread per
 * connection get different shares of busy cores (in the 64-client soak under {@code fixed:grpc},
 * gRPC calls took 44 ms at the median and the SOAP calls beside them 4 ms). Learning from them
 * ranked the protocols by their queues instead of by the work a call costs, sent small calls to
 * SOAP, the costlier per call, and lowered the calls/s of the whole; the models learned at lower
 * concurrency, or the priors, decide meanwhile.
 */
public final class AdaptivePolicy implements SelectionPolicy {
    public static final String NAME = "adaptive";
    /** Payloads are estimated up to this size; beyond it the choice no longer depends on size. */
    static final long ESTIMATE_CAP = 8L << 20;
    static final int EXPLORE_EVERY = 32;
    /** A runner-up predicted within this factor of the best is tried once in {@link #EXPLORE_EVERY} calls. */
    static final double EXPLORE_RATIO = 1.5;
    /** Counting a payload at least this far is always cheap. */
    static final long MIN_DECISION_CAP = 1024;
    /** How far a call the policy did not choose (a pinned one) is counted to learn from. */
    static final long LEARNING_CAP = 1L << 20;
    /**
     * A runner-up that has had no sample for this long is tried once more, if its prediction is
     * within {@link #REPROBE_RATIO} of the best or {@link #REPROBE_EXTRA_MICROS} above it: without
     * this, a model spoilt by a burst of slow samples (queueing under load, a long GC) is never
     * corrected, because exploration only ever picks a close runner-up.
     */
    static final long REPROBE_NANOS = 10_000_000_000L;
    static final double REPROBE_RATIO = 4;
    static final double REPROBE_EXTRA_MICROS = 20_000;
    /** Attempts in flight per core past which a call's time is not learned from. */
    static final int SATURATED_PER_CORE = 2;
    private static final int SATURATED = SATURATED_PER_CORE * Runtime.getRuntime().availableProcessors();

    // keyed by a record, not by protocol + " " + address: the concatenated key was built and hashed
    // afresh for every candidate of every call, about a quarter of the decision's time
    private final Map<ModelKey, CostModel> models = new ConcurrentHashMap<>();
    /** Per operation (by identity, a handful per stub), the models of its last suite's candidates. */
    private final Map<OperationDescriptor, Candidates> byOperation = new ConcurrentHashMap<>();
    private volatile Learner lastLearner;
    private final AtomicLong decisions = new AtomicLong();
    private final LongSupplier clock;

    public AdaptivePolicy() {
        this(System::nanoTime);
    }

    /** With the clock that times re-probes (tests pass a fake one). */
    AdaptivePolicy(LongSupplier nanoClock) {
        this.clock = nanoClock;
    }

    @Override
    public String name() {
        return NAME;
    }

    @Override
    public String select(CallContext call, List<String> candidates) {
        if (candidates.size() == 1) {
            return candidates.get(0);
        }
        CostModel[] ms = models(call, candidates);
        // a payload counted whole within the smallest cap needs no crossovers: any larger cap counts the same
        long bytes = call.estimatedBytes(MIN_DECISION_CAP);
        if (!call.estimateIsExact()) {
            bytes = call.estimatedBytes(decisionCap(ms));
        }
        bytes += call.expectedResponseBytes();
        int best = -1;
        int second = -1;
        double bestTime = Double.MAX_VALUE;
        double secondTime = Double.MAX_VALUE;
        for (int i = 0; i < ms.length; i++) {
            double t = ms[i].predictMicros(bytes);
            if (t < bestTime) {
                second = best;
                secondTime = bestTime;
                best = i;
                bestTime = t;
            } else if (t < secondTime) {
                second = i;
                secondTime = t;
            }
        }
        if (second < 0 || !call.estimateIsExact()) {   // a capped estimate may hide a huge payload
            return candidates.get(best);
        }
        // relative only: a try costs (second - best), once in EXPLORE_EVERY calls, so a runner-up
        // within 1.5x costs the calls under 2 % on average; 100 µs more on a 25 µs call would cost 12 %
        boolean close = secondTime < bestTime * EXPLORE_RATIO;
        if (close && decisions.incrementAndGet() % EXPLORE_EVERY == 0) {
            return candidates.get(second);
        }
        boolean affordable = secondTime <= bestTime * REPROBE_RATIO || secondTime - bestTime <= REPROBE_EXTRA_MICROS;
        if (affordable && ms[second].claimReprobe(clock.getAsLong())) {
            return candidates.get(second);
        }
        return candidates.get(best);
    }

    /**
     * The candidates' models, in their order: looked up by key once per operation, suite and
     * candidate list, then reused, so that a steady call finds them with one identity lookup and
     * allocates nothing (a key per candidate per call was most of the decision's cost).
     */
    private CostModel[] models(CallContext call, List<String> candidates) {
        OperationDescriptor operation = call.operation();
        ProtocolSuite suite = call.suite();
        Candidates known = byOperation.get(operation);
        if (known != null && known.suite == suite
                && (known.names == candidates || known.names.equals(candidates))) {
            return known.models;
        }
        CostModel[] ms = new CostModel[candidates.size()];
        for (int i = 0; i < ms.length; i++) {
            String p = candidates.get(i);
            ms[i] = model(p, suite.endpoint(p).address(), operation.name());
        }
        byOperation.put(operation, new Candidates(suite, List.copyOf(candidates), ms));
        return ms;
    }

    /** One operation's candidates on one suite, and their models in the same order. */
    private record Candidates(ProtocolSuite suite, List<String> names, CostModel[] models) {
    }

    /**
     * How far the payload must be counted for the ranking to be final: twice the largest size at
     * which two candidates' predictions cross. Past it the cheapest per byte wins whatever the
     * exact size, so a 10^6-node list is counted only up to the crossover, not node by node.
     */
    private static long decisionCap(CostModel[] ms) {
        double crossing = 0;
        for (int i = 0; i < ms.length; i++) {
            for (int j = i + 1; j < ms.length; j++) {
                crossing = Math.max(crossing, ms[i].crossover(ms[j]));
            }
        }
        return (long) Math.min(ESTIMATE_CAP, Math.max(MIN_DECISION_CAP, 2 * crossing));
    }

    @Override
    public void observe(CallRecord r) {
        long payload = r.payloadBytes();
        if (r.succeeded() && payload >= 0 && payload <= ESTIMATE_CAP && r.address() != null
                && r.callsInFlight() <= SATURATED) {
            learnerOf(r).learn(payload, r.latency().toNanos() / 1000.0, clock.getAsLong());
        }
    }

    /** The model a record teaches: the last one taught when it is the same (the steady case, no lookup). */
    private CostModel learnerOf(CallRecord r) {
        Learner last = lastLearner;
        if (last != null && last.protocol.equals(r.protocol()) && last.address.equals(r.address())
                && last.operation.equals(r.operation())) {
            return last.model;
        }
        CostModel m = model(r.protocol(), r.address(), r.operation());
        lastLearner = new Learner(r.protocol(), r.address(), r.operation(), m);
        return m;
    }

    /** The model last taught and whose it is. */
    private record Learner(String protocol, String address, String operation, CostModel model) {
    }

    @Override
    public long learningEstimateCap() {
        return LEARNING_CAP;
    }

    /** The current prediction for a payload of one operation over one protocol to one endpoint, in microseconds. */
    public double predictMicros(String protocol, String address, String operation, long bytes) {
        return model(protocol, address, operation).predictMicros(bytes);
    }

    private CostModel model(String protocol, String address, String operation) {
        ModelKey key = new ModelKey(protocol, address, operation);
        CostModel m = models.get(key);
        return m != null ? m : models.computeIfAbsent(key, k -> CostModel.prior(protocol, clock.getAsLong()));
    }

    private record ModelKey(String protocol, String address, String operation) {
    }

    /**
     * time = fixed + bytes × perByte, both in microseconds, each learned as a low quantile
     * ({@value #QUANTILE}) of what the calls took rather than their average. Under load a call's
     * time is mostly queueing, which both protocols share on the same cores: an average then tells
     * the protocols apart by luck (in the 64-client soak, 93% of calls went over SOAP at a quarter
     * of gRPC's calls/s); the calls that did not queue still show each protocol's own cost. Each
     * sample moves the estimate by a fraction of itself: down by {@code RATE × (1 − QUANTILE)}
     * when below it, up by {@code RATE × QUANTILE} when above, so it settles where that fraction
     * of samples is below, and a burst of slow samples (a GC pause, a queue) moves it up only a
     * little. The first samples (connection set-up, a cold JIT) are skipped. A sample below a
     * {@link #STALE_BELOW} of the estimate replaces it: waiting and compiling make calls slower,
     * never faster, so such a sample shows the estimate is stale. Without this, a protocol whose
     * model rose while the JIT compiled its path lost the operation to one still at its prior, and
     * only the re-probe every {@link AdaptivePolicy#REPROBE_NANOS} tried it again, each try moving
     * its model a step (docs/benchmarks/adaptive-sweep.md, "Large first calls").
     */
    static final class CostModel {
        static final double QUANTILE = 0.2;
        private static final double RATE = 0.1;
        private static final long SMALL = 2 * 1024;
        private static final long LARGE = 32 * 1024;
        private static final int SKIPPED = 2;
        /** A sample below this fraction of the estimate replaces it. */
        static final double STALE_BELOW = 0.25;
        // written under this model's lock, read without it: a prediction may mix a step's two fields,
        // which moves it by a fraction of one step
        private volatile double fixed;
        private volatile double perByte;
        private int seen;
        /** When this model last had a sample, or was picked to get one. */
        private final AtomicLong touchedNanos;

        CostModel(double fixedMicros, double perByteMicros, long nowNanos) {
            this.fixed = fixedMicros;
            this.perByte = perByteMicros;
            this.touchedNanos = new AtomicLong(nowNanos);
        }

        /** True for the one caller that may re-probe this stale model now; the next may after another interval. */
        boolean claimReprobe(long nowNanos) {
            long touched = touchedNanos.get();
            return nowNanos - touched >= REPROBE_NANOS && touchedNanos.compareAndSet(touched, nowNanos);
        }

        /**
         * SOAP: 20x the binary protocol's cost per byte and 1.5x its cost for a small call, the
         * latter as this implementation's own bench measures it
         * (docs/benchmarks/sweep.md: an empty call 988 µs over SOAP, 646 over gRPC). SC2000 had
         * SOAP a little cheaper for tiny calls; here it is not, and a prior that said so sent every
         * small call of a JVM that was busy from its start (nothing learned) to SOAP. tcp, the
         * small-call protocol: a quarter of gRPC's cost per call and the same per byte (the same
         * protobuf codec; docs/tcp-wire.md: 24-38 µs where gRPC takes 150-220); it is a candidate
         * for small calls only ({@code ProtocolProvider.policyMaxBytes}).
         */
        static CostModel prior(String protocol, long nowNanos) {
            if (ProtocolSuite.FAILSAFE.equals(protocol)) {
                return new CostModel(600, 0.08, nowNanos);
            }
            return SizePolicy.SMALL_CALLS.equals(protocol) ? new CostModel(100, 0.004, nowNanos)
                    : new CostModel(400, 0.004, nowNanos);
        }

        /** The payload at which the two predictions are equal, or 0 if one is cheaper everywhere. */
        double crossover(CostModel other) {
            double f1 = fixed;
            double b1 = perByte;
            double f2 = other.fixed;
            double b2 = other.perByte;
            if (b1 == b2) {
                return 0;
            }
            double x = (f2 - f1) / (b1 - b2);
            return x > 0 ? x : 0;
        }

        double predictMicros(long bytes) {
            return fixed + perByte * bytes;
        }

        synchronized void learn(long bytes, double sample, long nowNanos) {
            touchedNanos.set(nowNanos);
            if (++seen <= SKIPPED) {
                return;
            }
            if (bytes <= SMALL) {
                fixed = Math.max(1, learned(fixed, sample - perByte * bytes));
            } else if (bytes >= LARGE) {
                perByte = Math.max(1e-6, learned(perByte, Math.max(0, sample - fixed) / bytes));
            }
        }

        /** The estimate after a sample: one step of the quantile toward it, or the sample itself when far below. */
        private static double learned(double estimate, double sample) {
            if (sample < estimate * STALE_BELOW) {
                return sample;
            }
            return estimate * (1 + RATE * (sample < estimate ? QUANTILE - 1 : QUANTILE));
        }
    }
}
