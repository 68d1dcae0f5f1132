package io.switchboard.server;

import io.switchboard.idl.runtime.DeclaredFault;
import io.switchboard.protocol.RefusedException;
import io.switchboard.protocol.ServerCall;
import io.switchboard.protocol.ServerInterceptor;
import io.switchboard.protocol.spi.DeduplicatingInterceptor;
import java.util.Objects;

/**
 * Counts each call in {@link ServerCallStats} under its component, operation and protocol: its
 * outcome and how long the steps below it and the operation took (decoding and encoding are the
 * protocol's and not included), and each request the protocol refused. It sits right around the
 * {@link DeduplicatingInterceptor} the protocols share and asks it whether a call id is a repeat,
 * so that a repeat is counted as such (and its wait for the first run's outcome is its time); a
 * call a step below refuses (a reused call id) is counted as refused, for its reason.
 * One instance serves every protocol of a component. Internal: {@link ComponentServer} builds it.
 */
final class CallStatsInterceptor implements ServerInterceptor {
    private final ServerCallStats stats;
    /** Null: no de-duplicator below, no call is a repeat. */
    private final DeduplicatingInterceptor dedup;

    CallStatsInterceptor(ServerCallStats stats, DeduplicatingInterceptor dedup) {
        this.stats = Objects.requireNonNull(stats);
        this.dedup = dedup;
    }

    @Override
    public Object intercept(ServerCall call, Chain next) throws DeclaredFault {
        boolean repeat = dedup != null && dedup.remembers(call.operation(), call.callId());
        ServerCallStats.Outcome outcome = ServerCallStats.Outcome.ERROR;
        long started = System.nanoTime();
        try {
            Object response = next.proceed(call);
            outcome = ServerCallStats.Outcome.OK;
            return response;
        } catch (DeclaredFault fault) {
            outcome = ServerCallStats.Outcome.FAULT;
            throw fault;
        } catch (RefusedException refusal) {
            // refused by a step below (a reused call id, say): the operation did not run
            stats.refused(call.component(), call.operation().name(), call.protocol(), refusal.reason());
            outcome = null;
            throw refusal;
        } finally {
            if (outcome != null) {
                stats.record(call.component(), call.operation().name(), call.protocol(),
                        repeat ? ServerCallStats.Outcome.REPEAT : outcome, System.nanoTime() - started);
            }
        }
    }

    @Override
    public void refused(ServerCall call, String reason) {
        stats.refused(call.component(), call.operation().name(), call.protocol(), reason);
    }
}
