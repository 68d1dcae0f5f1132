package io.switchboard.protocol.soap;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.switchboard.protocol.Peer;
import io.switchboard.protocol.ServerCallContext;
import io.switchboard.protocol.soap.SoapCalls.Outcome;
import java.time.Duration;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.Test;

/**
 * A cancel message by call id acts only on a call of the same identity; one that comes before its
 * call is kept for that call, for a while and within bounds.
 */
class SoapCallsTest {
    private static final Peer ALICE = Peer.of("spiffe://example.org/alice", Peer.Authentication.MUTUAL_TLS, "10.0.0.1:4000");
    private static final Peer BOB = Peer.of("bob", Peer.Authentication.TOKEN, "10.0.0.2:4000");
    private static final String ID = "0123456789abcdef0123456789abcdef";

    /** The clock the early cancels age by: moved by hand. */
    private final AtomicLong now = new AtomicLong();
    private final SoapCalls calls = new SoapCalls(Duration.ofSeconds(30), SoapCalls.PER_IDENTITY, SoapCalls.IN_ALL,
            now::get);

    private static ServerCallContext callOf(Peer peer) {
        return ServerCallContext.create(null, null, peer);
    }

    @Test
    void aCancelFromAnotherIdentityDoesNothing() {
        ServerCallContext alicesCall = callOf(ALICE);
        try (ServerCallContext.Scope running = calls.running("Bank", ID, alicesCall)) {
            assertEquals(Outcome.REMEMBERED, calls.cancel("Bank", ID, BOB, false), "bob's cancel finds no call of his");
            assertEquals(Outcome.REMEMBERED, calls.cancel("Bank", ID, Peer.anonymous("10.0.0.3:1"), false),
                    "nor does an anonymous one");
            assertFalse(alicesCall.cancelledNow(), "alice's call runs on");

            assertEquals(Outcome.CANCELLED, calls.cancel("Bank", ID, ALICE.withRemoteAddress("10.0.0.9:7"), false),
                    "alice's own cancel, from any address");
            assertTrue(alicesCall.cancelledNow());
        }
        assertEquals(Outcome.NOT_FOUND, calls.cancel("Bank", ID, ALICE, true), "an ended call is not found");
    }

    @Test
    void twoCallersMayRunTheSameIdEachCancellingOnlyTheirOwn() {
        ServerCallContext alices = callOf(ALICE);
        ServerCallContext bobs = callOf(BOB);
        try (ServerCallContext.Scope a = calls.running("Bank", "same-id", alices);
             ServerCallContext.Scope b = calls.running("Bank", "same-id", bobs)) {
            assertEquals(Outcome.CANCELLED, calls.cancel("Bank", "same-id", BOB, false));
            assertTrue(bobs.cancelledNow());
            assertFalse(alices.cancelledNow(), "bob's cancel left alice's call alone");
        }
    }

    @Test
    void anonymousCallsAreCancelledByAnonymousCancels() {
        ServerCallContext call = callOf(Peer.anonymous("127.0.0.1:5000"));
        try (ServerCallContext.Scope running = calls.running("Bank", "id-1", call)) {
            assertEquals(Outcome.NOT_FOUND, calls.cancel("Bank", "id-1", BOB, true), "an identity cancels no anonymous call");
            assertEquals(Outcome.CANCELLED, calls.cancel("Bank", "id-1", Peer.anonymous("127.0.0.1:5001"), false),
                    "the client's cancel is a new connection");
            assertTrue(call.cancelledNow());
        }
    }

    @Test
    void aCancelBeforeItsCallStopsThatCallOnce() {
        assertEquals(Outcome.REMEMBERED, calls.cancel("Bank", ID, ALICE, false));
        assertEquals(Outcome.REMEMBERED, calls.cancel("Bank", ID, ALICE, false), "sent twice, kept once");
        assertNull(calls.running("Bank", ID, callOf(ALICE)), "the call that follows must not run");
        assertEquals(0, calls.remembered(), "the cancel is used up");
        try (ServerCallContext.Scope again = calls.running("Bank", ID, callOf(ALICE))) {
            assertNotNull(again, "a later call under the same id runs");
        }
        assertEquals(Outcome.REMEMBERED, calls.cancel("Other", ID, ALICE, false));
        try (ServerCallContext.Scope other = calls.running("Bank", ID, callOf(ALICE))) {
            assertNotNull(other, "a cancel for another component stops nothing here");
        }
    }

    @Test
    void anotherIdentitysEarlyCancelLeavesThisCallAlone() {
        assertEquals(Outcome.REMEMBERED, calls.cancel("Bank", ID, BOB, false));
        try (ServerCallContext.Scope alices = calls.running("Bank", ID, callOf(ALICE))) {
            assertNotNull(alices, "alice's call runs");
        }
        assertEquals(1, calls.remembered(BOB.identity()), "bob's cancel waits for bob's own call");
        assertNull(calls.running("Bank", ID, callOf(BOB)));
    }

    @Test
    void aCancelOfARunningCallOnlyIsNotKept() {
        assertEquals(Outcome.NOT_FOUND, calls.cancel("Bank", ID, ALICE, true));
        assertEquals(0, calls.remembered());
        try (ServerCallContext.Scope retry = calls.running("Bank", ID, callOf(ALICE))) {
            assertNotNull(retry, "the call sent again after its timeout runs");
        }
    }

    @Test
    void anEarlyCancelIsForgottenOnceItsTimeHasPassed() {
        assertEquals(Outcome.REMEMBERED, calls.cancel("Bank", ID, ALICE, false));
        now.addAndGet(Duration.ofSeconds(30).toNanos());
        assertEquals(Outcome.REMEMBERED, calls.cancel("Bank", "another-id", ALICE, false));
        now.addAndGet(1);   // the first is past its 30 s now, the second is not
        try (ServerCallContext.Scope late = calls.running("Bank", ID, callOf(ALICE))) {
            assertNotNull(late, "a call that comes after the cancel was forgotten runs");
        }
        assertNull(calls.running("Bank", "another-id", callOf(ALICE)), "the younger cancel still holds");
        assertEquals(0, calls.remembered());
    }

    @Test
    void aFloodOfEarlyCancelsFromOneIdentityKeepsOnlyItsShare() {
        assertEquals(Outcome.REMEMBERED, calls.cancel("Bank", ID, ALICE, false));
        Peer mallory = Peer.of("mallory", Peer.Authentication.TOKEN, "10.6.6.6:1");
        for (int i = 0; i < 10_000; i++) {
            assertEquals(Outcome.REMEMBERED, calls.cancel("Bank", "flood-" + i, mallory, false));
        }
        assertEquals(SoapCalls.PER_IDENTITY, calls.remembered(mallory.identity()), "mallory keeps her share only");
        assertEquals(SoapCalls.PER_IDENTITY + 1, calls.remembered());
        assertNotNull(calls.running("Bank", "flood-0", callOf(mallory)), "her oldest went first");
        assertNull(calls.running("Bank", "flood-9999", callOf(mallory)), "her newest stay");
        assertNull(calls.running("Bank", ID, callOf(ALICE)), "alice's cancel outlived the flood");
    }

    @Test
    void whenAllAreFullTheLargestShareGivesUpItsOldest() {
        assertEquals(Outcome.REMEMBERED, calls.cancel("Bank", ID, ALICE, false));
        for (int p = 0; p < 100; p++) {   // 6,400 cancels, each identity within its share
            Peer peer = Peer.of("flooder-" + p, Peer.Authentication.TOKEN, "10.6.6." + p + ":1");
            for (int i = 0; i < SoapCalls.PER_IDENTITY; i++) {
                calls.cancel("Bank", "flood-" + i, peer, false);
            }
        }
        assertEquals(SoapCalls.IN_ALL, calls.remembered(), "no more than the whole");
        assertNull(calls.running("Bank", ID, callOf(ALICE)), "the smallest share kept its cancel");
    }
}
