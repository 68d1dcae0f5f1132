package io.switchboard.protocol.local;

import static org.junit.jupiter.api.Assertions.assertEquals;

import io.switchboard.protocol.CallOptions;
import io.switchboard.protocol.Peer;
import io.switchboard.testing.conformance.AbstractIdentityConformanceTest;
import org.junit.jupiter.api.Test;

/** The local protocol: a call is made in this process by the caller that names itself. */
class LocalIdentityTest extends AbstractIdentityConformanceTest {
    @Override
    protected String protocolName() {
        return "local";
    }

    @Override
    protected boolean remote() {
        return false;
    }

    @Override
    protected void assertPlainPeer(Peer peer) {
        assertEquals(Peer.of(LocalProtocolProvider.DEFAULT_CALLER, Peer.Authentication.IN_PROCESS, null), peer);
    }

    @Test
    void aCallerThatNamesItselfIsItsPrincipal() {
        assertEquals(Peer.of("reports", Peer.Authentication.IN_PROCESS, null),
                LocalTransport.caller(CallOptions.DEFAULT.with(LocalProtocolProvider.CALLER, "reports")));
        assertEquals(Peer.of(LocalProtocolProvider.DEFAULT_CALLER, Peer.Authentication.IN_PROCESS, null),
                LocalTransport.caller(CallOptions.DEFAULT.with(LocalProtocolProvider.CALLER, " ")));
    }

    @Test
    void aClientsCallerNameNamesItsCallsUnlessACallNamesAnother() {
        assertEquals(Peer.of("reports", Peer.Authentication.IN_PROCESS, null),
                LocalTransport.caller(CallOptions.DEFAULT, "reports"));
        assertEquals(Peer.of("billing", Peer.Authentication.IN_PROCESS, null),
                LocalTransport.caller(CallOptions.DEFAULT.with(LocalProtocolProvider.CALLER, "billing"), "reports"));
        assertEquals(Peer.of(LocalProtocolProvider.DEFAULT_CALLER, Peer.Authentication.IN_PROCESS, null),
                LocalTransport.caller(CallOptions.DEFAULT, " "));
        assertEquals(null, io.switchboard.protocol.ClientSettings.defaults().withCallerName(" ").callerName());
    }
}
