package io.switchboard.server.authz;

import io.switchboard.protocol.ServerInterceptor;
import io.switchboard.testing.conformance.AbstractAuthorizationConformanceTest;
import java.util.List;

/**
 * The identity x authorization conformance suite with this module's policy as the authorization
 * step: one allow rule naming a principal, or one without {@code source} for anyone.
 */
abstract class AuthorizationMatrix extends AbstractAuthorizationConformanceTest {
    @Override
    protected ServerInterceptor allowOnly(String principal) {
        return step(new AuthorizationPolicy.Rule("only-" + principal, List.of(principal), List.of()));
    }

    @Override
    protected ServerInterceptor allowAnyone() {
        return step(new AuthorizationPolicy.Rule("anyone", List.of(), List.of()));
    }

    private static ServerInterceptor step(AuthorizationPolicy.Rule allow) {
        return new AuthorizationInterceptor(AuthorizationPolicy.of("matrix", List.of(), List.of(allow)),
                CallPaths.COMPONENT, AuthorizationInterceptor.Denials.NONE);
    }
}
