package io.switchboard.testing.spi;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.switchboard.idl.runtime.DeclaredFault;
import io.switchboard.idl.runtime.OperationDescriptor;
import io.switchboard.protocol.CallIds;
import io.switchboard.protocol.Peer;
import io.switchboard.protocol.RefusedException;
import io.switchboard.protocol.ServerCall;
import io.switchboard.protocol.ServerCallContext;
import io.switchboard.protocol.ServerInterceptor;
import io.switchboard.protocol.spi.DeduplicatingInterceptor;
import io.switchboard.testing.conformance.ConformanceComponent;
import io.switchboard.testing.conformance.DivideFault;
import io.switchboard.testing.conformance.DivideFaultException;
import io.switchboard.testing.conformance.Spin;
import io.switchboard.testing.conformance.SpinResponse;
import io.switchboard.testing.conformance.Increment;
import io.switchboard.testing.conformance.IncrementResponse;
import java.time.Duration;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.Test;

/** The de-duplicating step alone, with a fake next step (the skeleton form is {@link DeduplicatingSkeletonTest}). */
class DeduplicatingInterceptorTest {
    private static final OperationDescriptor INCREMENT = ConformanceComponent.DESCRIPTOR.operation("increment");
    private static final Peer ALICE = Peer.of("spiffe://example.org/team-a", Peer.Authentication.MUTUAL_TLS, "10.0.0.1:5000");
    private static final Peer BOB = Peer.of("bob", Peer.Authentication.TOKEN, "10.0.0.2:5000");

    private final DeduplicatingInterceptor once = new DeduplicatingInterceptor(1 << 20, Duration.ofMinutes(1));
    private final AtomicInteger runs = new AtomicInteger();
    private final AtomicLong total = new AtomicLong();
    /** The component: adds to a total, as a deposit adds to a balance. */
    private final ServerInterceptor.Chain deposit = c -> {
        runs.incrementAndGet();
        IncrementResponse r = new IncrementResponse();
        r.setTotal(total.addAndGet(((Increment) c.request()).getBy()));
        return r;
    };

    private static Increment by(int amount) {
        Increment i = new Increment();
        i.setBy(amount);
        return i;
    }

    private static ServerCall call(String protocol, String callId, Object request) {
        return new ServerCall("Counter", ConformanceComponent.DESCRIPTOR, protocol, INCREMENT, request, callId);
    }

    private interface Step {
        Object run() throws DeclaredFault;
    }

    /** Runs {@code step} as a call made by {@code peer}, as a protocol server enters its call's context. */
    private static Object as(Peer peer, Step step) throws DeclaredFault {
        try (ServerCallContext.Scope scope = ServerCallContext.create(null, null, peer).enter()) {
            return step.run();
        }
    }

    private static long totalOf(Object response) {
        return ((IncrementResponse) response).getTotal();
    }

    @Test
    void aRepeatedCallIdGetsTheFirstResultWithoutRunningAgainWhateverItsProtocol() throws Exception {
        assertFalse(once.remembers(INCREMENT, "id-1"));
        Object first = once.intercept(call("grpc", "id-1", by(1)), deposit);
        assertTrue(once.remembers(INCREMENT, "id-1"), "the id is now a repeat for the counting step");
        Object repeat = once.intercept(call("soap", "id-1", by(1)), deposit);
        Object other = once.intercept(call("soap", "id-2", by(1)), deposit);

        assertSame(first, repeat, "the first run's answer itself");
        assertEquals(2, runs.get(), "id-1 ran once, id-2 once");
        assertEquals(2L, totalOf(other));
        assertEquals(2, once.remembered());
    }

    @Test
    void anotherIdentitysRequestUnderAUsedIdIsRefusedAndNeverRuns() throws Exception {
        // an id with "100" in it, as one in a few hundred random ids has: the check below must judge the text
        // around the id, not trip on the id itself
        String x = "100" + CallIds.next().substring(3);
        Object alices = as(ALICE, () -> once.intercept(call("grpc", x, by(100)), deposit));

        RefusedException e = assertThrows(RefusedException.class,
                () -> as(BOB, () -> once.intercept(call("soap", x, by(5)), deposit)));
        assertEquals(DeduplicatingInterceptor.CALL_ID_REUSE, e.reason());
        assertTrue(e.getMessage().contains(x), "the refusal names the id it refuses: " + e.getMessage());
        assertFalse(e.getMessage().replace(x, "").contains("100"), "the refusal tells nothing of the first call: " + e.getMessage());
        // the same request as alice's, from bob: the id is still hers
        assertEquals(DeduplicatingInterceptor.CALL_ID_REUSE, assertThrows(RefusedException.class,
                () -> as(BOB, () -> once.intercept(call("soap", x, by(100)), deposit))).reason());
        assertFalse((Boolean) as(BOB, () -> once.remembers(INCREMENT, x)), "bob has no call of that id");

        assertEquals(1, runs.get(), "bob's deposits never ran");
        assertSame(alices, as(ALICE, () -> once.intercept(call("tcp", x, by(100)), deposit)),
                "alice's repeat still gets her answer");
        assertEquals(100L, totalOf(alices));
        assertEquals(1, runs.get());
    }

    @Test
    void theFailsafesSoapRepeatOfACallOverTheUnixSocketGetsTheFirstRun() throws Exception {
        Peer overTheSocket = Peer.of("uid:1000", Peer.Authentication.UNIX_SOCKET, "/run/switchboard/tcp.sock");
        Peer overSoap = Peer.anonymous("127.0.0.1:41000");   // the same process, over loopback TCP
        String x = CallIds.next();
        Object first = as(overTheSocket, () -> once.intercept(call("tcp", x, by(7)), deposit));
        assertSame(first, as(overSoap, () -> once.intercept(call("soap", x, by(7)), deposit)),
                "the repeat over SOAP gets the run over the socket");
        assertEquals(DeduplicatingInterceptor.CALL_ID_REUSE, assertThrows(RefusedException.class,
                () -> as(overSoap, () -> once.intercept(call("soap", x, by(8)), deposit))).reason(),
                "another request under the id is still refused");
        assertEquals(DeduplicatingInterceptor.CALL_ID_REUSE, assertThrows(RefusedException.class,
                () -> as(BOB, () -> once.intercept(call("soap", x, by(7)), deposit))).reason(),
                "a proven identity is not the socket's caller");
        assertEquals(1, runs.get());
    }

    /**
     * XML has one NaN: a first attempt over a binary protocol keeps a NaN's sign and payload bits,
     * its failsafe repeat over SOAP brings the canonical NaN, and the two are one request. Every
     * other value is still compared exactly, -0.0 against 0.0 among them.
     */
    @Test
    void theSoapRepeatOfARequestWithNaNPayloadsGetsTheFirstRun() throws Exception {
        OperationDescriptor spin = ConformanceComponent.DESCRIPTOR.operation("spin");   // not idempotent
        ServerInterceptor.Chain spinning = c -> {
            SpinResponse r = new SpinResponse();
            r.setRounds(runs.incrementAndGet());
            return r;
        };
        double payloadNaN = Double.longBitsToDouble(0x7ff8_0000_dead_beefL);
        double negativeNaN = Double.longBitsToDouble(0xfff8_0000_0000_0001L);
        String x = CallIds.next();
        Spin overTcp = spinning(payloadNaN, -0.0, negativeNaN, 1.5);
        Spin overSoap = spinning(Double.NaN, -0.0, Double.NaN, 1.5);   // as XML's "NaN" decodes
        Spin positiveZero = spinning(Double.NaN, 0.0, Double.NaN, 1.5);

        Object first = once.intercept(new ServerCall("Counter", ConformanceComponent.DESCRIPTOR, "tcp", spin, overTcp, x),
                spinning);
        assertSame(first, once.intercept(new ServerCall("Counter", ConformanceComponent.DESCRIPTOR, "soap", spin, overSoap, x),
                spinning), "the repeat over SOAP gets the first run");
        assertEquals(DeduplicatingInterceptor.CALL_ID_REUSE, assertThrows(RefusedException.class,
                () -> once.intercept(new ServerCall("Counter", ConformanceComponent.DESCRIPTOR, "soap", spin, positiveZero, x),
                        spinning)).reason(), "0.0 is not -0.0");
        assertEquals(1, runs.get());
    }

    private static Spin spinning(double... values) {
        Spin s = new Spin();
        s.setValues(values);
        s.setMaxRounds(1);
        return s;
    }

    @Test
    void anonymouslyAnotherRequestUnderAUsedIdIsRefused() throws Exception {
        String x = CallIds.next();
        Object first = once.intercept(call("grpc", x, by(1)), deposit);
        RefusedException e = assertThrows(RefusedException.class, () -> once.intercept(call("soap", x, by(2)), deposit));
        assertEquals(DeduplicatingInterceptor.CALL_ID_REUSE, e.reason());
        assertSame(first, once.intercept(call("local", x, by(1)), deposit), "a true repeat still gets the first answer");
        assertEquals(1, runs.get());
        assertEquals(1L, total.get());
    }

    @Test
    void aFloodOfFreshIdsFromOneIdentityEvictsOnlyItsOwnCalls() throws Exception {
        DeduplicatingInterceptor small = new DeduplicatingInterceptor(256 * 1024, Duration.ofMinutes(1));
        String alicesId = CallIds.next();
        Object alices = as(ALICE, () -> small.intercept(call("grpc", alicesId, by(7)), deposit));
        long alicesBytes = small.rememberedBytes(ALICE.identity());
        assertTrue(alicesBytes > 0);

        as(BOB, () -> {
            for (int i = 0; i < 100_000; i++) {
                small.intercept(call("grpc", CallIds.next(), by(1)), deposit);
            }
            return null;
        });

        assertTrue(small.rememberedBytes() <= 256 * 1024, "the bound holds: " + small.rememberedBytes());
        assertTrue(small.rememberedBytes(BOB.identity()) > 128 * 1024, "bob keeps what is left of the budget");
        assertEquals(alicesBytes, small.rememberedBytes(ALICE.identity()), "alice's call was not evicted");
        int before = runs.get();
        assertSame(alices, as(ALICE, () -> small.intercept(call("soap", alicesId, by(7)), deposit)),
                "answered from its first run");
        assertEquals(before, runs.get());
    }

    @Test
    void aShareBoundsOneIdentityBelowTheWhole() throws Exception {
        DeduplicatingInterceptor shared = new DeduplicatingInterceptor(1 << 20, 64 * 1024, Duration.ofMinutes(1), null);
        as(BOB, () -> {
            for (int i = 0; i < 10_000; i++) {
                shared.intercept(call("grpc", CallIds.next(), by(1)), deposit);
            }
            return null;
        });
        assertTrue(shared.rememberedBytes(BOB.identity()) <= 64 * 1024);
        assertTrue(shared.rememberedBytes(BOB.identity()) > 60 * 1024, "the share is used, not emptied");
    }

    @Test
    void aMalformedCallIdIsRefusedAndNotRemembered() {
        for (String id : new String[] {"two words", "<x/>", "x".repeat(CallIds.MAX_LENGTH + 1), "caf\u00e9"}) {
            RefusedException e = assertThrows(RefusedException.class, () -> once.intercept(call("local", id, by(1)), deposit));
            assertEquals("malformed", e.reason());
        }
        assertEquals(0, runs.get());
        assertEquals(0, once.remembered());
    }

    @Test
    void aRepeatOfAFailedCallGetsTheSameFailure() {
        DivideFaultException fault = new DivideFaultException(new DivideFault());
        ServerInterceptor.Chain failing = c -> {
            runs.incrementAndGet();
            throw fault;
        };

        assertSame(fault, assertThrows(DivideFaultException.class, () -> once.intercept(call("grpc", "f", by(1)), failing)));
        assertSame(fault, assertThrows(DivideFaultException.class, () -> once.intercept(call("soap", "f", by(1)), failing)));
        assertEquals(1, runs.get());
    }

    @Test
    void withoutACallIdOrForAnIdempotentOperationEveryCallGoesOn() throws Exception {
        ServerInterceptor.Chain next = c -> runs.incrementAndGet();
        OperationDescriptor echo = ConformanceComponent.DESCRIPTOR.operation("echoDoubles");

        once.intercept(call("grpc", null, by(1)), next);
        once.intercept(call("grpc", null, by(1)), next);
        ServerCall idempotent = new ServerCall("Counter", ConformanceComponent.DESCRIPTOR, "grpc", echo, null, "same");
        once.intercept(idempotent, next);
        once.intercept(idempotent, next);

        assertEquals(4, runs.get());
        assertEquals(0, once.remembered(), "nothing held");
    }
}
