package io.switchboard.metastub;

import io.switchboard.protocol.Endpoint;
import io.switchboard.protocol.spi.ProtocolProvider;
import io.switchboard.protocol.spi.Protocols;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;

/**
 * The protocols of one client–server pair: the client's list in its order of preference and the
 * server's endpoints. The candidates for a call are the protocols both speak, in the client's
 * order. SOAP is the common denominator: a suite without it on both sides is refused. An endpoint
 * of an in-process-only protocol ({@code local}) is a candidate only if the component is served
 * in this JVM ({@link ProtocolProvider#reachableInProcess}). When the server's SOAP endpoint is
 * protected ({@code https://}, {@link ProtocolProvider#protectedEndpoint}), an unprotected endpoint
 * of another protocol ({@code grpc://} in plain text) is never a candidate: a client is not
 * downgraded from TLS to plain text, and the fallback to SOAP stays on {@code https://}.
 *
 * <pre>{@code
 * ProtocolSuite suite = ProtocolSuite.of(List.of("grpc", "soap"), entry.endpoints());
 * List<String> candidates = suite.candidates();   // [grpc, soap] if the server has both
 * }</pre>
 */
public final class ProtocolSuite {
    /** The failsafe's name (SOAP's): the protocol every party speaks, found once among the providers. */
    public static final String FAILSAFE = Protocols.failsafe().name();

    private final List<String> clientProtocols;
    private final Map<String, Endpoint> serverEndpoints;
    private final List<String> candidates;
    private final String inProcess;

    private ProtocolSuite(List<String> clientProtocols, List<Endpoint> serverEndpoints) {
        this.clientProtocols = List.copyOf(clientProtocols);
        Map<String, Endpoint> byName = new LinkedHashMap<>();
        for (Endpoint e : serverEndpoints) {
            byName.putIfAbsent(e.protocol(), e);
        }
        this.serverEndpoints = java.util.Collections.unmodifiableMap(byName);
        List<String> common = new ArrayList<>();
        Map<String, ProtocolProvider> providers = Protocols.all();
        Endpoint failsafe = byName.get(FAILSAFE);
        boolean mustProtect = failsafe != null && providers.get(FAILSAFE).protectedEndpoint(failsafe);
        String local = null;
        for (String p : this.clientProtocols) {
            if (byName.containsKey(p) && !common.contains(p)) {
                ProtocolProvider provider = providers.get(p);
                boolean reachable = provider != null && provider.reachableInProcess(byName.get(p));
                if (provider != null && provider.inProcessOnly() && !reachable) {
                    continue;   // an in-process endpoint of another JVM: it leads nowhere from here
                }
                if (mustProtect && (provider == null || !provider.protectedEndpoint(byName.get(p)))) {
                    continue;   // the server speaks TLS: a plain-text endpoint beside it would be a downgrade
                }
                common.add(p);
                if (reachable && local == null) {
                    local = p;
                }
            }
        }
        this.inProcess = local;
        if (!common.contains(FAILSAFE)) {
            throw new IllegalArgumentException(FAILSAFE + " must be spoken by both sides (client " + clientProtocols
                    + ", server " + byName.keySet() + ")");
        }
        this.candidates = List.copyOf(common);
    }

    public static ProtocolSuite of(List<String> clientProtocols, List<Endpoint> serverEndpoints) {
        Objects.requireNonNull(clientProtocols, "clientProtocols");
        Objects.requireNonNull(serverEndpoints, "serverEndpoints");
        return new ProtocolSuite(clientProtocols, serverEndpoints);
    }

    public List<String> clientProtocols() {
        return clientProtocols;
    }

    public List<Endpoint> serverEndpoints() {
        return List.copyOf(serverEndpoints.values());
    }

    /** Protocols both sides speak, in the client's order; always contains SOAP. */
    public List<String> candidates() {
        return candidates;
    }

    /**
     * The first candidate whose call runs inside this JVM (the component is served here, as the
     * protocol's {@link ProtocolProvider#reachableInProcess} found when this suite was made), or
     * null. Candidates never include an in-process-only protocol that does not reach it.
     */
    public String inProcessCandidate() {
        return inProcess;
    }

    public Endpoint endpoint(String protocol) {
        Endpoint e = serverEndpoints.get(protocol);
        if (e == null) {
            throw new IllegalArgumentException("the server has no " + protocol + " endpoint");
        }
        return e;
    }

    @Override
    public String toString() {
        return "ProtocolSuite[client=" + clientProtocols + ", server=" + serverEndpoints.keySet()
                + ", candidates=" + candidates + "]";
    }
}
