package io.switchboard.registry.server;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.switchboard.protocol.Endpoint;
import io.switchboard.registry.ComponentEntry;
import io.switchboard.registry.Entries;
import io.switchboard.registry.store.InMemoryRegistryStore;
import io.switchboard.registry.wire.BindFaultException;
import io.switchboard.registry.wire.CallStats;
import io.switchboard.registry.wire.Entry;
import io.switchboard.registry.wire.RebindFaultException;
import io.switchboard.registry.wire.RenewFaultException;
import io.switchboard.registry.wire.RenewWithStatsFaultException;
import io.switchboard.registry.wire.UnbindFaultException;
import io.switchboard.testing.ManualClock;
import java.util.List;
import org.junit.jupiter.api.Test;

/** Every write refuses with its own declared fault, a code a program acts on and a reason a person reads. */
class WriteFaultsTest {
    private static final String SECRET = "s";

    private final RegistryService registry = new RegistryService(new InMemoryRegistryStore(), SECRET, new ManualClock());

    private static Entry entry(String instance) {
        return Entries.toWire(new ComponentEntry("Echo", instance,
                List.of(new Endpoint("soap", "http://127.0.0.1:1/axis2/services/Echo")), null, null, null, null,
                List.of(), 10));
    }

    @Test
    void eachOperationSaysUnauthorizedInItsOwnFault() {
        BindFaultException bind = assertThrows(BindFaultException.class, () -> registry.bind(entry("e1"), "wrong"));
        RebindFaultException rebind = assertThrows(RebindFaultException.class, () -> registry.rebind(entry("e1"), null));
        UnbindFaultException unbind = assertThrows(UnbindFaultException.class, () -> registry.unbind("Echo", "e1", "wrong"));
        RenewFaultException renew = assertThrows(RenewFaultException.class, () -> registry.renew("Echo", "e1", null));
        RenewWithStatsFaultException withStats = assertThrows(RenewWithStatsFaultException.class,
                () -> registry.renewWithStats("Echo", "e1", "wrong", new CallStats()));

        assertEquals(List.of("unauthorized", "unauthorized", "unauthorized", "unauthorized", "unauthorized"),
                List.of(bind.getFaultInfo().getCode(), rebind.getFaultInfo().getCode(), unbind.getFaultInfo().getCode(),
                        renew.getFaultInfo().getCode(), withStats.getFaultInfo().getCode()));
        assertEquals("the credential is not valid", bind.getFaultInfo().getReason());
        assertEquals("this registry needs a credential for writes", rebind.getFaultInfo().getReason());
        assertTrue(bind.getMessage().endsWith("the credential is not valid"), bind.getMessage());
        assertTrue(registry.lookup("Echo").isEmpty(), "nothing refused was written");
    }

    @Test
    void aSecondBindIsAlreadyBoundAndABadEntryInvalid() throws Exception {
        registry.bind(entry("e1"), SECRET);
        BindFaultException again = assertThrows(BindFaultException.class, () -> registry.bind(entry("e1"), SECRET));
        assertEquals("already-bound", again.getFaultInfo().getCode());

        Entry badName = entry("e2");
        badName.setName("no spaces allowed");
        RebindFaultException invalid = assertThrows(RebindFaultException.class, () -> registry.rebind(badName, SECRET));
        assertEquals("invalid", invalid.getFaultInfo().getCode());
        assertTrue(invalid.getFaultInfo().getReason().contains("not a valid component name"),
                invalid.getFaultInfo().getReason());

        UnbindFaultException noName = assertThrows(UnbindFaultException.class, () -> registry.unbind(null, "e1", SECRET));
        assertEquals("invalid", noName.getFaultInfo().getCode());
        assertEquals(1, registry.lookup("Echo").size(), "the refused writes left the bound entry alone");
    }

    @Test
    void renewWithStatsChecksTheCredentialBeforeTheFiguresAndRenewsNothingOnBadFigures() throws Exception {
        registry.bind(entry("e1"), SECRET);
        CallStats negative = new CallStats();
        negative.setUptimeSeconds(-1);

        RenewWithStatsFaultException stranger = assertThrows(RenewWithStatsFaultException.class,
                () -> registry.renewWithStats("Echo", "e1", "wrong", negative));
        assertEquals("unauthorized", stranger.getFaultInfo().getCode(), "a stranger learns nothing of the figures' checks");

        RenewWithStatsFaultException bad = assertThrows(RenewWithStatsFaultException.class,
                () -> registry.renewWithStats("Echo", "e1", SECRET, negative));
        assertEquals("invalid", bad.getFaultInfo().getCode());
        assertEquals(0, registry.reportCount());

        RenewWithStatsFaultException missing = assertThrows(RenewWithStatsFaultException.class,
                () -> registry.renewWithStats("Echo", null, SECRET, new CallStats()));
        assertEquals("invalid", missing.getFaultInfo().getCode(), "renew's own refusal, in renewWithStats' fault");
        assertFalse(registry.renewWithStats("Gone", "g1", SECRET, new CallStats()), "not bound: renew again by binding");
    }
}
