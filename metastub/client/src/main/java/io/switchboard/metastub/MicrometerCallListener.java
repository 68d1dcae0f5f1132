package io.switchboard.metastub;

import io.micrometer.core.instrument.DistributionSummary;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.Tags;
import io.micrometer.core.instrument.Timer;
import java.util.Map;
import java.util.Objects;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;

/**
 * Publishes every attempt a meta-stub makes as Micrometer metrics:
 * <ul>
 *   <li>{@value #CALLS}, a {@link Timer} of the attempt's latency, tagged {@code component},
 *       {@code operation}, {@code protocol}, {@code outcome} ({@code ok} or {@code error}; a
 *       declared fault is an answer, so {@code ok}) and {@code kind} ({@code chosen} by a policy,
 *       {@code pinned} on the call, or the failsafe's {@code fallback} to SOAP);</li>
 *   <li>{@value #PAYLOAD}, a {@link DistributionSummary} of the payload estimate the policy
 *       worked with, in bytes, tagged {@code component}, {@code operation} and {@code protocol};
 *       only for attempts that have one (a policy that does not look at sizes leaves none). The
 *       estimate is as far as the policy looked: {@code size} stops just past its threshold, so a
 *       large message shows there as a little over the threshold.</li>
 *   <li>{@value #WIRE}, a {@link DistributionSummary} of the bytes the transport actually put on
 *       the wire and took off it, tagged {@code component}, {@code operation}, {@code protocol}
 *       and {@code direction} ({@code sent} or {@code received}); only what was counted.</li>
 * </ul>
 * A call that fell back counts twice: an {@code error} attempt on the fast protocol and a
 * {@code fallback} attempt on SOAP.
 *
 * <pre>{@code
 * MeterRegistry registry = new SimpleMeterRegistry();          // or Prometheus, JMX, ...
 * MetaStub channel = MetaStub.builder(EchoComponent.DESCRIPTOR)
 *         .endpoints(entry.endpoints())
 *         .listener(new MicrometerCallListener(registry))
 *         .build();
 * EchoStub echo = EchoComponent.stub(channel);
 * echo.echoDoubles(values);
 * registry.get("switchboard.calls").tag("protocol", "grpc").tag("outcome", "ok").timer().count();
 * }</pre>
 *
 * <p>Micrometer is an optional dependency of the meta-stub: add {@code io.micrometer:micrometer-core}
 * (and the registry you publish to) to use this class.
 */
public final class MicrometerCallListener implements CallListener {
    /** Name of the latency timer, one per tag set. */
    public static final String CALLS = "switchboard.calls";
    /** Name of the payload-size summary. */
    public static final String PAYLOAD = "switchboard.call.payload.bytes";

    /** Name of the summary of bytes on the wire per attempt and direction. */
    public static final String WIRE = "switchboard.call.wire.bytes";

    private static final String PINNED_REASON = "pinned on call";

    private final MeterRegistry registry;
    // The listener runs on the caller's thread for every call. Micrometer's own lookup builds and
    // sorts a Tags object and a Meter.Id per call (several hundred ns and some garbage), so each
    // meter is looked up once per tag set and kept here. The tag values come from the interface
    // (operations) and the protocol list, so these maps stay small.
    private final Map<TimerKey, Timer> timers = new ConcurrentHashMap<>();
    private final Map<SummaryKey, DistributionSummary> summaries = new ConcurrentHashMap<>();
    private final Map<WireKey, DistributionSummary> wire = new ConcurrentHashMap<>();

    public MicrometerCallListener(MeterRegistry registry) {
        this.registry = Objects.requireNonNull(registry, "registry");
    }

    @Override
    public void onCall(CallRecord r) {
        TimerKey key = new TimerKey(r.component(), r.operation(), r.protocol(), r.succeeded(), kind(r));
        Timer timer = timers.get(key);
        if (timer == null) {
            timer = timers.computeIfAbsent(key, this::newTimer);
        }
        timer.record(r.latency().toNanos(), TimeUnit.NANOSECONDS);
        if (r.estimatedBytes() >= 0) {
            SummaryKey sk = new SummaryKey(r.component(), r.operation(), r.protocol());
            DistributionSummary summary = summaries.get(sk);
            if (summary == null) {
                summary = summaries.computeIfAbsent(sk, this::newSummary);
            }
            summary.record(r.estimatedBytes());
        }
        if (r.requestWireBytes() >= 0) {
            wireSummary(new WireKey(r.component(), r.operation(), r.protocol(), "sent")).record(r.requestWireBytes());
        }
        if (r.responseWireBytes() >= 0) {
            wireSummary(new WireKey(r.component(), r.operation(), r.protocol(), "received")).record(r.responseWireBytes());
        }
    }

    private DistributionSummary wireSummary(WireKey k) {
        DistributionSummary summary = wire.get(k);
        return summary != null ? summary : wire.computeIfAbsent(k, key -> DistributionSummary.builder(WIRE)
                .description("Bytes meta-stub call attempts sent and received on the wire, as their transport counted them")
                .baseUnit("bytes")
                .tags(Tags.of("component", key.component, "operation", key.operation, "protocol", key.protocol,
                        "direction", key.direction))
                .register(registry));
    }

    /** {@code pinned}, {@code fallback} or {@code chosen}: who decided the protocol of this attempt. */
    static String kind(CallRecord r) {
        if (PINNED_REASON.equals(r.reason())) {
            return "pinned";
        }
        return r.fallback() ? "fallback" : "chosen";
    }

    private Timer newTimer(TimerKey k) {
        return Timer.builder(CALLS)
                .description("Meta-stub call attempts: latency per protocol, outcome and who chose the protocol")
                .tags(Tags.of("component", k.component, "operation", k.operation, "protocol", k.protocol,
                        "outcome", k.ok ? "ok" : "error", "kind", k.kind))
                .register(registry);
    }

    private DistributionSummary newSummary(SummaryKey k) {
        return DistributionSummary.builder(PAYLOAD)
                .description("Payload estimate of meta-stub call attempts (binary-encoding bytes)")
                .baseUnit("bytes")
                .tags(Tags.of("component", k.component, "operation", k.operation, "protocol", k.protocol))
                .register(registry);
    }

    private record TimerKey(String component, String operation, String protocol, boolean ok, String kind) {
    }

    private record SummaryKey(String component, String operation, String protocol) {
    }

    private record WireKey(String component, String operation, String protocol, String direction) {
    }
}
