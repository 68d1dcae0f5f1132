package io.switchboard.protocol.spi;

import io.switchboard.idl.runtime.DeclaredFault;
import io.switchboard.protocol.ServerCall;
import io.switchboard.protocol.ServerInterceptor;
import java.util.Objects;

/**
 * Marks {@link PhaseMarks.Phase#INVOKE_START} and {@link PhaseMarks.Phase#INVOKE_END} around the
 * component's run, for the benchmark's phase breakdown; the last step of a server chain, so that
 * nothing else is timed as the implementation. {@code ComponentServer} puts {@link #INSTANCE} in
 * every chain only when {@link PhaseMarks#ENABLED}: otherwise it is not there and costs nothing.
 * Internal (benchmark support).
 *
 * <pre>{@code
 * // java -Dswitchboard.phases=true ...
 * PhaseMarks.install(recorder);
 * soapServer.export(ServerInterceptorChain.of("Echo", "soap", List.of(PhaseMarkInterceptor.INSTANCE), skeleton));
 * }</pre>
 */
public final class PhaseMarkInterceptor implements ServerInterceptor {
    /** Records into the sink {@link PhaseMarks#install} set, through {@link PhaseMarks#mark}. */
    public static final PhaseMarkInterceptor INSTANCE = new PhaseMarkInterceptor(null);

    /** Null: {@link PhaseMarks#mark}. */
    private final PhaseMarks.Sink sink;

    private PhaseMarkInterceptor(PhaseMarks.Sink sink) {
        this.sink = sink;
    }

    /** One that records straight into {@code sink}, whether marks are on in this JVM or not (for tests). */
    public static PhaseMarkInterceptor into(PhaseMarks.Sink sink) {
        return new PhaseMarkInterceptor(Objects.requireNonNull(sink));
    }

    @Override
    public Object intercept(ServerCall call, Chain next) throws DeclaredFault {
        mark(PhaseMarks.Phase.INVOKE_START);
        try {
            return next.proceed(call);
        } finally {
            mark(PhaseMarks.Phase.INVOKE_END);
        }
    }

    private void mark(PhaseMarks.Phase phase) {
        if (sink == null) {
            PhaseMarks.mark(phase);
        } else {
            sink.mark(phase, System.nanoTime());
        }
    }
}
