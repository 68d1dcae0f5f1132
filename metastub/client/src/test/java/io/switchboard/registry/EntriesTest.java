package io.switchboard.registry;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

import io.switchboard.registry.wire.EndpointInfo;
import io.switchboard.registry.wire.Entry;
import java.util.List;
import java.util.function.Consumer;
import org.junit.jupiter.api.Test;

/** A wire entry missing a member the schema requires is refused by name, never with a NullPointerException. */
class EntriesTest {
    private static Entry complete() {
        Entry e = new Entry();
        e.setName("Echo");
        e.setInstanceId("i-1");
        EndpointInfo soap = new EndpointInfo();
        soap.setProtocol("soap");
        soap.setAddress("http://127.0.0.1:1/axis2/services/Echo");
        e.setEndpoints(List.of(soap));
        return e;
    }

    @Test
    void aCompleteEntryIsRead() {
        assertEquals("i-1", Entries.fromWire(complete()).instanceId());
    }

    @Test
    void eachMissingRequiredMemberIsNamed() {
        assertMissing(e -> e.setName(null), "the entry has no name");
        assertMissing(e -> e.setInstanceId(null), "Echo has no instanceId");
        assertMissing(e -> e.getEndpoints().get(0).setProtocol(null), "an endpoint of Echo has no protocol");
        assertMissing(e -> e.getEndpoints().get(0).setAddress(null), "an endpoint of Echo has no address");
    }

    private static void assertMissing(Consumer<Entry> damage, String message) {
        Entry e = complete();
        damage.accept(e);
        IllegalArgumentException x = assertThrows(IllegalArgumentException.class, () -> Entries.fromWire(e));
        assertEquals(message, x.getMessage());
    }
}
