package io.switchboard.server.authz;

import io.switchboard.idl.runtime.DeclaredFault;
import io.switchboard.protocol.Peer;
import io.switchboard.protocol.PermissionDeniedException;
import io.switchboard.protocol.ServerCall;
import io.switchboard.protocol.ServerInterceptor;
import java.util.List;
import java.util.Objects;
import java.util.function.Supplier;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Asks the authorization policy about every call before anything else on the server runs it
 * (before de-duplication, so a denied caller cannot learn another's outcome by its call id): a
 * call the policy denies ends in a {@link PermissionDeniedException}, which every protocol sends
 * as its own denial (gRPC {@code PERMISSION_DENIED}, SOAP {@code sb:PermissionDenied}, tcp
 * {@code ERPCAUTH}). Denials are counted ({@link Denials}; a component server also counts each as a refusal of its operation) and logged at most once a minute per
 * identity and path. The policy is read per call from a supplier, so a reloaded one
 * ({@link PolicyFile}) takes effect at the next call. API.
 *
 * <pre>{@code
 * ComponentServer server = ComponentServer.builder()
 *         .authorization(PolicyFile.watch(Path.of("authz.json"), Duration.ofSeconds(5)))
 *         .build();
 * // or, in a chain of one's own:
 * ServerInterceptor authz = new AuthorizationInterceptor(AuthorizationPolicy.read(file), CallPaths.COMPONENT, Denials.NONE);
 * }</pre>
 */
public final class AuthorizationInterceptor implements ServerInterceptor {
    private static final Logger LOG = LoggerFactory.getLogger(AuthorizationInterceptor.class);

    /** Where denials are counted. */
    @FunctionalInterface
    public interface Denials {
        /** Counts nothing. */
        Denials NONE = (call, protocol, peer, path) -> { };

        /**
         * {@code peer} was denied {@code path} by the policy, over {@code protocol} (null: not
         * known), on {@code call} (null outside a server chain: the registry's gRPC reads).
         */
        void denied(ServerCall call, String protocol, Peer peer, String path);
    }

    private final Supplier<AuthorizationPolicy> policy;
    private final CallPaths paths;
    private final Denials denials;
    private final DenialLog log;

    /** A fixed policy. */
    public AuthorizationInterceptor(AuthorizationPolicy policy, CallPaths paths, Denials denials) {
        this(constant(Objects.requireNonNull(policy, "policy")), paths, denials);
    }

    /** The policy {@code policy} holds at each call (a {@link PolicyFile}'s current one). */
    public AuthorizationInterceptor(Supplier<AuthorizationPolicy> policy, CallPaths paths, Denials denials) {
        this(policy, paths, denials, new DenialLog(System::nanoTime, LOG::warn));
    }

    AuthorizationInterceptor(Supplier<AuthorizationPolicy> policy, CallPaths paths, Denials denials, DenialLog log) {
        this.policy = Objects.requireNonNull(policy, "policy");
        this.paths = Objects.requireNonNull(paths, "paths");
        this.denials = Objects.requireNonNull(denials, "denials");
        this.log = log;
    }

    private static Supplier<AuthorizationPolicy> constant(AuthorizationPolicy p) {
        return () -> p;
    }

    @Override
    public Object intercept(ServerCall call, Chain next) throws DeclaredFault {
        check(call, call.protocol(), call.peer(), paths.paths(call));
        return next.proceed(call);
    }

    /**
     * For listeners outside a server chain (the registry's gRPC reads): refuses, counts and logs
     * unless the policy allows {@code peer} every one of {@code paths}.
     *
     * @throws PermissionDeniedException naming the first path denied
     */
    public void check(String protocol, Peer peer, List<String> paths) {
        check(null, protocol, peer, paths);
    }

    private void check(ServerCall call, String protocol, Peer peer, List<String> paths) {
        AuthorizationPolicy p = policy.get();
        for (String path : paths) {
            AuthorizationPolicy.Decision decision = p.evaluate(peer, path);
            if (!decision.allowed()) {
                denials.denied(call, protocol, peer, path);
                log.denied(peer.identity(), path, decision.reason());
                // the caller learns the path and who it was taken for, never the policy's rules
                throw PermissionDeniedException.denied(path, "permission denied: " + path + " is not allowed to "
                        + (peer.authenticated() ? peer.principal() : "an anonymous caller"));
            }
        }
    }

    /** The policy in force now. */
    public AuthorizationPolicy policy() {
        return policy.get();
    }

    @Override
    public String toString() {
        return "AuthorizationInterceptor[" + policy.get().name() + "]";
    }
}
