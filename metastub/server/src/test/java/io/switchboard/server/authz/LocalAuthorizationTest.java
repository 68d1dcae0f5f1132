package io.switchboard.server.authz;

import io.switchboard.protocol.CallOptions;
import io.switchboard.protocol.ClientSettings;
import io.switchboard.protocol.local.LocalProtocolProvider;
import org.junit.jupiter.api.Test;

/**
 * The local protocol: the caller is the component or client in this process that named itself,
 * allowed when the policy names it and denied otherwise; unnamed, it is
 * {@link LocalProtocolProvider#DEFAULT_CALLER}.
 */
class LocalAuthorizationTest extends AuthorizationMatrix {
    private volatile String caller;

    @Override
    protected String protocolName() {
        return "local";
    }

    @Override
    protected boolean remote() {
        return false;
    }

    @Override
    protected String plainPrincipal() {
        return LocalProtocolProvider.DEFAULT_CALLER;
    }

    @Override
    protected CallOptions options() {
        return caller == null ? CallOptions.DEFAULT : CallOptions.DEFAULT.with(LocalProtocolProvider.CALLER, caller);
    }

    @Test
    void aCallerThatNamesItselfIsAllowedOnlyWhenThePolicyNamesIt() {
        try {
            policy(allowOnly("reports"));
            caller = "reports";
            assertAllowed(plainEndpoint(), ClientSettings.defaults(), "reports");
            caller = "billing";
            assertDenied(plainEndpoint(), ClientSettings.defaults(), "billing under a policy naming reports");
        } finally {
            caller = null;
        }
    }
}
