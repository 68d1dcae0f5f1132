package io.switchboard.protocol.soap;

import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.switchboard.protocol.Peer;
import io.switchboard.protocol.ServerCallContext;
import org.junit.jupiter.api.Test;

/** A cancel message by call id acts only on a call of the same identity. */
class SoapCallsTest {
    private static final Peer ALICE = Peer.of("spiffe://example.org/alice", Peer.Authentication.MUTUAL_TLS, "10.0.0.1:4000");
    private static final Peer BOB = Peer.of("bob", Peer.Authentication.TOKEN, "10.0.0.2:4000");

    private final SoapCalls calls = new SoapCalls();

    @Test
    void aCancelFromAnotherIdentityDoesNothing() {
        ServerCallContext alicesCall = ServerCallContext.create(null, null, ALICE);
        try (ServerCallContext.Scope running = calls.running("Bank", "0123456789abcdef0123456789abcdef", alicesCall)) {
            assertFalse(calls.cancel("Bank", "0123456789abcdef0123456789abcdef", BOB), "bob's cancel finds nothing");
            assertFalse(calls.cancel("Bank", "0123456789abcdef0123456789abcdef", Peer.anonymous("10.0.0.3:1")),
                    "nor does an anonymous one");
            assertFalse(alicesCall.cancelledNow(), "alice's call runs on");

            assertTrue(calls.cancel("Bank", "0123456789abcdef0123456789abcdef", ALICE.withRemoteAddress("10.0.0.9:7")),
                    "alice's own cancel, from any address");
            assertTrue(alicesCall.cancelledNow());
        }
        assertFalse(calls.cancel("Bank", "0123456789abcdef0123456789abcdef", ALICE), "an ended call is not found");
    }

    @Test
    void twoCallersMayRunTheSameIdEachCancellingOnlyTheirOwn() {
        ServerCallContext alices = ServerCallContext.create(null, null, ALICE);
        ServerCallContext bobs = ServerCallContext.create(null, null, BOB);
        try (ServerCallContext.Scope a = calls.running("Bank", "same-id", alices);
             ServerCallContext.Scope b = calls.running("Bank", "same-id", bobs)) {
            assertTrue(calls.cancel("Bank", "same-id", BOB));
            assertTrue(bobs.cancelledNow());
            assertFalse(alices.cancelledNow(), "bob's cancel left alice's call alone");
        }
    }

    @Test
    void anonymousCallsAreCancelledByAnonymousCancels() {
        ServerCallContext call = ServerCallContext.create(null, null, Peer.anonymous("127.0.0.1:5000"));
        try (ServerCallContext.Scope running = calls.running("Bank", "id-1", call)) {
            assertFalse(calls.cancel("Bank", "id-1", BOB), "an identity cancels no anonymous call");
            assertTrue(calls.cancel("Bank", "id-1", Peer.anonymous("127.0.0.1:5001")), "the client's cancel is a new connection");
            assertTrue(call.cancelledNow());
        }
    }
}
