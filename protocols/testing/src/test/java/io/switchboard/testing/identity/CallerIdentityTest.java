package io.switchboard.testing.identity;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.switchboard.protocol.Peer;
import io.switchboard.protocol.PermissionDeniedException;
import io.switchboard.protocol.TokenVerifier;
import io.switchboard.protocol.spi.CallerIdentity;
import io.switchboard.testing.TestTokens;
import java.net.InetSocketAddress;
import org.junit.jupiter.api.Test;

class CallerIdentityTest {
    private static final Peer CERTIFIED = Peer.of("spiffe://x/y", Peer.Authentication.MUTUAL_TLS, "10.0.0.1:4000");
    private final TestTokens tokens = TestTokens.get();

    @Test
    void aVerifiedTokenWinsOverTheCertificateAndKeepsTheAddress() {
        CallerIdentity caller = CallerIdentity.of(CERTIFIED, tokens.valid("alice"), tokens.verifier());
        caller.checkVerified();
        assertEquals(Peer.of("alice", Peer.Authentication.TOKEN, "10.0.0.1:4000"), caller.peer());
    }

    @Test
    void noTokenLeavesTheTransportsPeer() {
        CallerIdentity caller = CallerIdentity.of(CERTIFIED, null, tokens.verifier());
        caller.checkVerified();
        assertSame(CERTIFIED, caller.peer());
        assertNull(caller.refusal());
    }

    @Test
    void aTokenThatDoesNotVerifyIsRefusedNeverDowngraded() {
        for (String token : tokens.hostile("mallory").values()) {
            CallerIdentity caller = CallerIdentity.of(Peer.anonymous("10.0.0.2:1"), token, tokens.verifier());
            PermissionDeniedException e = assertThrows(PermissionDeniedException.class, caller::checkVerified);
            assertTrue(e.unauthenticated());
            assertEquals(Peer.Authentication.ANONYMOUS, caller.peer().authentication());
        }
    }

    @Test
    void aVerifierThatFailsOtherwiseStillRefuses() {
        TokenVerifier broken = token -> {
            throw new IllegalStateException("key store gone");
        };
        CallerIdentity caller = CallerIdentity.of(CERTIFIED, "t", broken);
        assertTrue(assertThrows(PermissionDeniedException.class, caller::checkVerified).unauthenticated());
    }

    @Test
    void bearerHeadersAreParsedAndAnythingElseIsATokenThatCannotVerify() {
        String token = tokens.valid("alice");
        assertEquals(token, CallerIdentity.bearer("Bearer " + token));
        assertEquals(token, CallerIdentity.bearer("bearer  " + token + " "));
        assertNull(CallerIdentity.bearer(null));
        for (String garbage : new String[] {"Basic YWxpY2U6cHc=", "Bearer", "Bearer ", "Bearer a b", token, ""}) {
            CallerIdentity caller = CallerIdentity.of(CERTIFIED, CallerIdentity.bearer(garbage), tokens.verifier());
            assertThrows(PermissionDeniedException.class, caller::checkVerified, garbage);
        }
    }

    @Test
    void addressesAreWrittenWithBracketsForIpv6() {
        assertEquals("127.0.0.1:80", CallerIdentity.address(new InetSocketAddress("127.0.0.1", 80)));
        assertEquals("[::1]:80", CallerIdentity.address(new InetSocketAddress("::1", 80)));
        assertEquals("[fe80::1:0:0:2]:80", CallerIdentity.address(new InetSocketAddress("fe80:0:0:0:1:0:0:2", 80)));
        assertEquals("[2001:db8:1:2:3:4:5:6]:80",
                CallerIdentity.address(new InetSocketAddress("2001:db8:1:2:3:4:5:6", 80)));
        assertNull(CallerIdentity.address(null));
        // a link-local address's scope (%eth0, %2) names the host's interface, not the caller
        assertEquals("[fe80::1]:80", CallerIdentity.address(new InetSocketAddress(scoped(), 80)));
        assertEquals(Peer.anonymous("127.0.0.1:80"),
                CallerIdentity.tlsPeer(null, new InetSocketAddress("127.0.0.1", 80)));
    }

    private static java.net.InetAddress scoped() {
        try {
            return java.net.Inet6Address.getByAddress(null, new byte[] {(byte) 0xfe, (byte) 0x80, 0, 0, 0, 0, 0, 0,
                    0, 0, 0, 0, 0, 0, 0, 1}, 2);
        } catch (java.net.UnknownHostException e) {
            throw new AssertionError(e);
        }
    }
}
