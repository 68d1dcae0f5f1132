package io.switchboard.metastub;

import io.switchboard.idl.runtime.OperationDescriptor;
import io.switchboard.protocol.spi.ProtocolProvider;
import io.switchboard.protocol.spi.Protocols;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.stream.Collectors;
import java.util.concurrent.CompletableFuture;
import java.util.function.Supplier;

/**
 * Chooses the protocol of a call, from the most specific to the least: a protocol pinned on the
 * call ({@link MetaStub#PROTOCOL}), a policy set on the call ({@link MetaStub#POLICY}), a policy
 * set for the operation, the in-process preference, the stub's policy. Protocols in back-off
 * ({@link ProtocolHealth}) are left out of what a policy may choose; a pinned call goes where it
 * is told. Sets the call's suite (one for the whole call, even if the endpoints change meanwhile),
 * protocol, reason and the policy that learns from its records.
 *
 * @throws NoCommonProtocolException (before anything is sent) the call pins a protocol client and
 *                                   server do not share
 */
final class SelectionInterceptor implements ClientInterceptor {
    private final Supplier<ProtocolSuite> suites;
    private final SelectionPolicy stubPolicy;
    private final Map<String, SelectionPolicy> operationPolicies;
    private final ProtocolHealth health;
    private final MessageSize sizes;
    private final ResponseSizes responseSizes;
    private final boolean preferInProcess;
    /** Protocols a policy picks only when it names them ({@link ProtocolProvider#chosenByPolicies()} false). */
    private final Set<String> namedOnly;
    /** Protocols a policy picks only for calls up to a size ({@link ProtocolProvider#policyMaxBytes()}), and that size. */
    private final Map<String, Long> smallOnly;
    /**
     * Each policy's reasons, made once, so that calls of policies taking turns on one stub (the
     * stub's, an operation's, those set on calls) do not make three strings each. Copied on
     * write; at most {@link #MAX_REASONS}.
     */
    private volatile Reasons[] reasons = new Reasons[0];
    private static final int MAX_REASONS = 16;

    SelectionInterceptor(Supplier<ProtocolSuite> suites, SelectionPolicy stubPolicy,
                         Map<String, SelectionPolicy> operationPolicies, ProtocolHealth health, MessageSize sizes,
                         ResponseSizes responseSizes, boolean preferInProcess) {
        this.suites = suites;
        this.stubPolicy = stubPolicy;
        this.operationPolicies = operationPolicies;
        this.health = health;
        this.sizes = sizes;
        this.responseSizes = responseSizes;
        this.preferInProcess = preferInProcess;
        this.namedOnly = Protocols.all().values().stream().filter(p -> !p.chosenByPolicies())
                .map(ProtocolProvider::name).collect(Collectors.toUnmodifiableSet());
        this.smallOnly = Protocols.all().values().stream().filter(p -> p.policyMaxBytes() < Long.MAX_VALUE)
                .collect(Collectors.toUnmodifiableMap(ProtocolProvider::name, ProtocolProvider::policyMaxBytes));
    }

    @Override
    public CompletableFuture<Object> intercept(ClientCall call, Chain next) {
        OperationDescriptor operation = call.operation();
        ProtocolSuite suite = suites.get();
        call.suite = suite;
        call.context = new CallContext(operation, call.request(), suite, sizes)
                .expectingResponse(responseSizes.expected(operation.name()));
        String pinned = call.options().get(MetaStub.PROTOCOL);
        if (pinned != null) {
            if (!suite.candidates().contains(pinned)) {
                throw new NoCommonProtocolException("call pins " + pinned + ", which client and server do not share "
                        + suite.candidates());
            }
            // a pinned call goes where it is told, also while that protocol is in back-off, and does not fall back
            call.pinned = true;
            call.policy = stubPolicy;
            call.route(pinned, "pinned on call");
            return next.proceed(call);
        }
        SelectionPolicy chosen = call.options().get(MetaStub.POLICY);
        String level = "call";
        if (chosen == null) {
            chosen = operationPolicies.get(operation.name());
            level = "operation";
        }
        if (chosen == null) {
            chosen = stubPolicy;
            level = "stub";
        }
        call.policy = chosen;
        List<String> healthy = health.filter(suite.candidates());
        List<String> candidates = chosenBy(chosen, healthy, call.context);
        String inProcess = suite.inProcessCandidate();
        if (preferInProcess && "stub".equals(level) && inProcess != null && candidates.contains(inProcess)) {
            // the component is served in this JVM: no policy set on the call or operation picks otherwise
            call.route(inProcess, "in-process (the component is served in this JVM; over the stub's "
                    + chosen.name() + " policy)");
        } else {
            String why = healthy.size() < suite.candidates().size()
                    ? chosen.name() + " (" + level + " policy; " + health.describeAvoided() + ")"
                    : reason(chosen, level);
            call.route(chosen.select(call.context, candidates), why);
        }
        return next.proceed(call);
    }

    /**
     * The candidates {@code policy} may pick: those policies pick, each only for calls within its
     * size ({@link ProtocolProvider#policyMaxBytes()}), and the one a fixed policy names.
     */
    private List<String> chosenBy(SelectionPolicy policy, List<String> candidates, CallContext context) {
        if (namedOnly.isEmpty() && smallOnly.isEmpty()) {
            return candidates;
        }
        String named = policy instanceof FixedPolicy f ? f.protocol() : null;
        List<String> kept = null;   // made at the first candidate left out: usually none is
        for (int i = 0; i < candidates.size(); i++) {
            String c = candidates.get(i);
            boolean keep = c.equals(named) || (!namedOnly.contains(c) && fits(c, context));
            if (!keep && kept == null) {
                kept = new ArrayList<>(candidates.subList(0, i));
            } else if (keep && kept != null) {
                kept.add(c);
            }
        }
        return kept == null ? candidates : List.copyOf(kept);
    }

    /** Why a policy at a level chose, as call records say it: built once per policy rather than per call. */
    private String reason(SelectionPolicy policy, String level) {
        Reasons r = reasonsOf(policy);
        return switch (level) {
            case "call" -> r.call;
            case "operation" -> r.operation;
            default -> r.stub;
        };
    }

    private Reasons reasonsOf(SelectionPolicy policy) {
        Reasons[] known = reasons;
        for (Reasons r : known) {
            if (r.policy == policy) {
                return r;
            }
        }
        Reasons r = new Reasons(policy, policy.name() + " (call policy)", policy.name() + " (operation policy)",
                policy.name() + " (stub policy)");
        if (known.length < MAX_REASONS) {   // past it (a new policy instance per call), made per call as before
            Reasons[] more = java.util.Arrays.copyOf(known, known.length + 1);
            more[known.length] = r;
            reasons = more;   // a race may drop another thread's entry: it is made again on its next call
        }
        return r;
    }

    /** A policy's reasons at each level. */
    private record Reasons(SelectionPolicy policy, String call, String operation, String stub) {
    }

    /** Whether the call is within what a policy may send over {@code protocol}; counts the request up to that size. */
    private boolean fits(String protocol, CallContext context) {
        Long max = smallOnly.get(protocol);
        return max == null || context.estimatedBytes(max) + context.expectedResponseBytes() <= max;
    }
}
